"""Classifications across four systems in one graph, each written by its real harvester:
Snowflake (fakesnow: TAG_REFERENCES tags an e-mail column pii=email; ACCESS_HISTORY has one
query that hashes it with SHA2, one that copies it plain, and one that joins it with a dbt
model's column), dbt (`dbt parse` with dbt-snowflake: meta pii=name on that model's column),
OpenLineage (openlineage-python's client: a job exporting the joined table to an S3 exchange
bucket, with column lineage and a tags facet on a column) and a local Spark job that writes
sha2(email) to an EU bucket and another that writes email to a US bucket (paths aliased to
the buckets), whose regions the S3 harvester reads from moto.

Each tag stops exactly at the two hashes and travels everywhere else, and `check --policy`
(pii must stay in eu-west-1) fails with exit 8, naming the path from Snowflake through
OpenLineage and Spark to the US bucket."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from botocore.client import BaseClient
from click.testing import CliRunner
from dbt_fixtures import SNOWFLAKE_ACCOUNT, DbtBuild
from graphs import drop_graph
from s3_fixtures import KEYS, put_many
from snowflake_fixtures import (
    ACCOUNT,
    HOUR,
    NOW,
    AccountUsage,
    Query,
    accessed,
    modified,
    urn,
)
from test_snowflake_tags import CONTACTS, CUSTOMERS, HASHED, scenario
from test_snowflake_tags import run as harvest_snowflake

from lineagegraph.cli import cli
from lineagegraph.errors import PolicyViolated
from lineagegraph.graph.falkordb import FalkorDBStore
from lineagegraph.graph.store import GraphStore, open_store
from lineagegraph.harvest.dbt.harvester import harvest_dbt
from lineagegraph.harvest.openlineage import harvest_openlineage
from lineagegraph.harvest.s3.harvester import harvest_s3
from lineagegraph.questions.tags import Propagation, derive_all
from lineagegraph.settings import GraphSettings, Settings

PRIVACY, MAILING = "ANALYTICS.MARTS.CUSTOMER_PRIVACY", "ANALYTICS.CORE.MAILING"
POLICY = {"name": "pii stays in the EU", "tag": "pii", "regions": ["eu-west-1"]}


def snowflake_queries(au: AccountUsage) -> None:
    """The Snowflake tag tests' queries (SHA2 of the e-mail, a plain copy that also counts and
    MD5s it) and tags, and a join of the copy with the dbt model's column that dbt's meta tags
    pii=name."""
    scenario(au)
    au.add(
        Query(
            "q3",
            NOW - 3 * HOUR,
            direct=[accessed(CONTACTS, "EMAIL"), accessed(PRIVACY, "NAME_PLAIN")],
            modified=[
                modified(
                    MAILING, {"EMAIL": [(CONTACTS, "EMAIL")], "NAME": [(PRIVACY, "NAME_PLAIN")]}
                )
            ],
            text="insert into analytics.core.mailing (email, name) select c.email, p.name_plain"
            " from analytics.core.contacts as c join analytics.marts.customer_privacy as p"
            " on c.email = p.name_plain",
            query_type="INSERT",
        )
    )


def emit_export(path: Path, exchange: str) -> None:
    """The export job's run, as openlineage-python's client writes it: MAILING to the exchange
    bucket column by column, its e-mail column tagged retention=30d."""
    from openlineage.client import OpenLineageClient
    from openlineage.client.event_v2 import (
        InputDataset,
        Job,
        OutputDataset,
        Run,
        RunEvent,
        RunState,
    )
    from openlineage.client.facet_v2 import column_lineage_dataset as cl
    from openlineage.client.facet_v2 import tags_dataset as tg
    from openlineage.client.transport.file import FileConfig, FileTransport

    source = ("snowflake://" + ACCOUNT, MAILING)
    lineage = cl.ColumnLineageDatasetFacet(
        fields={
            column: cl.Fields(inputFields=[cl.InputField(*source, column.upper())])
            for column in ("email", "name")
        }
    )
    tags = tg.TagsDatasetFacet(
        tags=[tg.TagsDatasetFacetFields("retention", "30d", "CONFIG", "email")]
    )
    client = OpenLineageClient(
        transport=FileTransport(FileConfig(log_file_path=str(path), append=True))
    )
    client.emit(
        RunEvent(
            eventType=RunState.COMPLETE,
            eventTime=datetime.fromtimestamp((NOW - 2 * HOUR) / 1000, UTC).isoformat(),
            run=Run(runId="0191d9a4-0000-7000-8000-000000000001"),
            job=Job(namespace="airflow", name="export.mailing"),
            producer="https://github.com/lineagegraph/tests",
            inputs=[InputDataset(*source)],
            outputs=[
                OutputDataset(
                    f"s3://{exchange}", "mailing", facets={"columnLineage": lineage, "tags": tags}
                )
            ],
        )
    )


def spark_jobs(spark: Any, settings: Settings, root: Path) -> None:
    """The exchange files (written with pyarrow: no job of their own), then one job that hashes
    the e-mail into the EU bucket and one that copies it into the US bucket (local paths the
    settings alias to the buckets)."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from pyspark.sql import functions as F

    from lineagegraph.spark import install

    exchange = root / "exchange" / "mailing"
    exchange.mkdir(parents=True)
    table = pa.table({"email": ["ann@example.com"], "name": ["Ann"]})
    pq.write_table(table, exchange / "part-00000.parquet")
    handle = install(spark, settings=settings)
    try:
        exported = spark.read.parquet(f"file://{root}/exchange/mailing")
        exported.select(F.sha2("email", 256).alias("email_hash"), "name").write.parquet(
            f"file://{root}/eu/hashed"
        )
        exported.select("email", "name").write.parquet(f"file://{root}/us/mailing")
        assert handle.flush()
    finally:
        handle.stop()


def derived(found: Propagation, node: str) -> dict[str, tuple[str, str]]:
    """tag -> (origin's source, origin's target) of each tag derived at `node`."""
    return {
        d.tag: (d.origin.source, d.origin.target) for d in found.derived(found.piece.index[node])
    }


@pytest.fixture
def graph_name(embedded_dir: Path) -> Iterator[str]:
    """A graph of its own on the shared embedded server, dropped afterwards."""
    name = f"four_{uuid.uuid4().hex[:10]}"
    yield name
    with open_store(GraphSettings(data_dir=embedded_dir, graph_name=name)) as store:
        assert isinstance(store, FalkorDBStore)
        drop_graph(store)


def test_tags_stop_at_hashes_and_travel_everywhere_else_across_four_systems(
    account_usage: AccountUsage,
    fakesnow_server: dict[str, Any],
    dbt_privacy_build: DbtBuild,
    spark: Any,
    moto: BaseClient,
    moto_endpoint: str,
    embedded_dir: Path,
    graph_name: str,
    tmp_path: Path,
) -> None:
    tag = uuid.uuid4().hex[:8]
    exchange, eu, us = f"lg-exchange-{tag}", f"lg-eu-{tag}", f"lg-us-{tag}"
    aliases = {f"file://{tmp_path}/{d}": f"s3://{b}" for d, b in (("exchange", exchange),
               ("eu", eu), ("us", us))}  # fmt: skip
    settings = Settings.model_validate(
        {
            "graph": {"data_dir": embedded_dir, "graph_name": graph_name},
            "identity": {"snowflake_account": ACCOUNT, "path_aliases": aliases},
            "s3": {"endpoint_url": moto_endpoint, "region": "us-east-1", **KEYS},
            "spark": {"spool_dir": tmp_path / "spool", "openlineage_dir": tmp_path / "ol"},
            "tags": {"policies": [POLICY]},
        }
    )
    assert SNOWFLAKE_ACCOUNT == ACCOUNT  # dbt's Snowflake urns are ACCESS_HISTORY's

    with open_store(settings.graph) as store:
        harvest_all(
            store, settings, account_usage, fakesnow_server, dbt_privacy_build, tmp_path, exchange
        )
        spark_jobs(spark, settings, tmp_path)
        regions = moto
        for bucket, region in ((exchange, "eu-west-1"), (eu, "eu-west-1"), (us, None)):
            where = {"CreateBucketConfiguration": {"LocationConstraint": region}} if region else {}
            regions.create_bucket(Bucket=bucket, **where)
            key = "hashed" if bucket == eu else "mailing"
            put_many(regions, bucket, {f"{key}/part-00000.parquet": (b"x", "STANDARD")})
            assert harvest_s3(store, settings, bucket).status == "success"
        found = derive_all(store, settings.tags)

    email, name = urn(CUSTOMERS) + "#EMAIL", urn(PRIVACY) + "#NAME_PLAIN"
    pii_email, pii_name = ("snowflake", email), ("dbt", name)
    thirty_days = ("openlineage", f"s3://{exchange}/mailing#email")
    # Snowflake: the plain copy and the join carry it, the SHA2 does not
    assert derived(found, urn(CONTACTS) + "#EMAIL") == {"pii=email": pii_email}
    assert derived(found, urn(HASHED) + "#EMAIL_HASH") == {}
    assert derived(found, urn(MAILING) + "#EMAIL") == {"pii=email": pii_email}
    assert derived(found, urn(MAILING) + "#NAME") == {"pii=name": pii_name}  # dbt's meta
    # OpenLineage: into the exchange bucket, where its own tag joins
    assert derived(found, f"s3://{exchange}/mailing#email") == {"pii=email": pii_email}
    assert derived(found, f"s3://{exchange}/mailing#name") == {"pii=name": pii_name}
    # Spark: the plain copy carries all three, sha2 stops the e-mail's two
    assert derived(found, f"s3://{us}/mailing#email") == {
        "pii=email": pii_email,
        "retention=30d": thirty_days,
    }
    assert derived(found, f"s3://{us}/mailing#name") == {"pii=name": pii_name}
    assert derived(found, f"s3://{eu}/hashed#email_hash") == {}
    assert derived(found, f"s3://{eu}/hashed#name") == {"pii=name": pii_name}
    stops = {(s.key, s.value, s.dst, s.reason) for s in found.stops()}
    every_feed = "every column feed masked by SHA2"
    assert stops == {
        ("pii", "email", urn(HASHED) + "#EMAIL_HASH", "masked by SHA2"),
        ("pii", "email", urn(CONTACTS) + "#MAILS", "masked by COUNT"),
        ("pii", "email", urn(CONTACTS) + "#KEY", "masked by MD5"),
        ("confidentiality", "restricted", urn(HASHED), every_feed),  # CUSTOMERS' own
        ("pii", "email", f"s3://{eu}/hashed#email_hash", "masked by SHA2"),
        ("retention", "30d", f"s3://{eu}/hashed#email_hash", "masked by SHA2"),
    }

    config = tmp_path / "lineagegraph.toml"
    config.write_text(
        f'[graph]\ndata_dir = "{embedded_dir}"\ngraph_name = "{graph_name}"\n'
        f'[[tags.policies]]\nname = "{POLICY["name"]}"\ntag = "pii"\nregions = ["eu-west-1"]\n'
    )
    checked = CliRunner().invoke(cli, ["--config", str(config), "check", "--policy"])
    assert checked.exit_code == PolicyViolated.exit_code == 8, checked.output
    path = " -> ".join([email, urn(CONTACTS) + "#EMAIL", urn(MAILING) + "#EMAIL",
                        f"s3://{exchange}/mailing#email", f"s3://{us}/mailing#email"])  # fmt: skip
    assert f"s3://{us}/mailing" in checked.output and path in checked.output.replace("\n", "")
    assert f"s3://{eu}" not in checked.output  # the EU bucket may hold it


def harvest_all(
    store: GraphStore,
    settings: Settings,
    au: AccountUsage,
    server: dict[str, Any],
    build: DbtBuild,
    root: Path,
    exchange: str,
) -> None:
    """Snowflake (as its tag tests harvest it), dbt (its Snowflake parse) and the OpenLineage
    export, into one graph."""
    snowflake_queries(au)
    report = harvest_snowflake(store, server, NOW)
    assert report.status == "success", report.warnings
    run, dbt = harvest_dbt(store, build.snowflake, snowflake_account=ACCOUNT)
    assert run.status == "success", dbt.problems
    emit_export(root / "events.jsonl", exchange)
    run, _ = harvest_openlineage(store, root / "events.jsonl", settings.identity.rules())
    assert run.status == "success"
