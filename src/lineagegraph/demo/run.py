"""Build the demo platform with the real client libraries over real protocols, then harvest it.

S3 is moto's server on loopback (boto3 over HTTP); Spark is a local session with the lineage
listener installed; Snowflake is fakesnow's server reached by the real connector. The Hadoop S3A
connector is not installable here, so Spark reads and writes a local mirror of the buckets and
the `identity.path_aliases` setting maps the mirror back to `s3://` (as it would for a bucket
mounted with mountpoint-s3 or s3fs): the graph names the data by its S3 urns either way.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lineagegraph.demo import platform as p
from lineagegraph.demo.account_usage import AccountUsage, Query, accessed, ddl, modified, stage
from lineagegraph.errors import ConfigError, HarvestError, LineageGraphError
from lineagegraph.graph.store import GraphStore, open_store
from lineagegraph.identity import column_urn, s3_file_urn, snowflake_urn
from lineagegraph.pipeline import now_ms
from lineagegraph.questions.lineage import Impact, LineagePath, impact, paths
from lineagegraph.reports.options import build_options
from lineagegraph.reports.orphans import run_report
from lineagegraph.reports.presentation import Report
from lineagegraph.settings import Settings

DAY_MS = 86_400_000
QUERY_GAP_MS = 200  # between the demo's Snowflake queries, which run after Spark's write
# Listener counts that mean an action's lineage is not in the graph.
_SPARK_LOSSES = frozenset(
    {"actions_failed", "actions_dropped", "actions_spooled", "worker_errors", "capture_errors"}
)
Echo = Callable[[str], None]


@dataclass
class DemoResult:
    """What the demo built and found, for printing and for its end-to-end test."""

    settings: Settings
    raw_object: str
    raw_dataset: str
    dashboard: str
    staging: str
    mart: str  # its SESSIONS column was dropped: `schema-history` shows when
    mart_revenue: str  # a column whose lineage crosses S3, Spark and Snowflake
    path: LineagePath | None
    impact: Impact
    orphans: Report
    seconds: float


STEPS = 5


def run_demo(workdir: Path, echo: Echo = print) -> DemoResult:
    """Seed S3, run Spark, fill Snowflake's ACCESS_HISTORY, harvest all three into the graph.

    Each step must succeed: a harvest that ends `partial`, a Spark action the listener could
    not record or any error stops the demo with HarvestError naming the step, so a demo that
    prints its answers is one whose graph is complete. Running it again into the same
    `workdir` gives the same answers (Spark's overwrite replaces its part files; the S3
    harvest retires the old ones as a rewrite).
    """
    missing = [m for m in ("moto", "fakesnow", "pyspark") if not _importable(m)]
    if missing:
        raise ConfigError(f"the demo needs {', '.join(missing)}: pip install 'lineagegraph[demo]'")
    started = time.monotonic()
    workdir = workdir.resolve()
    mirror = workdir / "s3-mirror"
    with local_s3_server() as endpoint, _snowflake_server() as snow:
        settings = demo_settings(workdir, mirror, endpoint, snow)
        with open_store(settings.graph) as store:
            store.init_schema()
            client = _s3_client(settings)
            with _step(1, f"S3 at {endpoint}: seeding s3://{p.RAW_BUCKET} and listing it", echo):
                echo(
                    "      raw click events for Spark; partner drops, archive copies and a backup "
                    "that nothing reads\n      (all uploaded now: a local S3 server stamps every "
                    "object with its upload time)"
                )
                _seed_s3(client)
                _harvest_s3(store, settings, p.RAW_BUCKET)
            with _step(
                2,
                "Spark: reading the raw events, writing curated Parquet (lineage listener on)",
                echo,
            ):
                _run_spark(settings, client, mirror)
            with _step(3, f"S3: listing s3://{p.CURATED_BUCKET}, Spark's output", echo):
                _harvest_s3(store, settings, p.CURATED_BUCKET)
            with _step(
                4,
                "Snowflake: COPY INTO the staging table from the curated prefix, "
                "a mart, a dashboard view; harvesting ACCESS_HISTORY and COLUMNS",
                echo,
            ):
                _seed_snowflake(snow, after=now_ms())
                _harvest_snowflake(store, settings)
            with _step(5, "Asking the graph", echo):
                result = _ask(store, settings)
    result.seconds = time.monotonic() - started
    return result


@contextlib.contextmanager
def _step(number: int, title: str, echo: Echo) -> Iterator[None]:
    """Announce a step; turn anything that stops it into a HarvestError that names it."""
    label = f"[{number}/{STEPS}]"
    echo(f"{label} {title}")
    try:
        yield
    except KeyboardInterrupt:
        raise
    except Exception as exc:
        reason = str(exc) if isinstance(exc, LineageGraphError) else f"{type(exc).__name__}: {exc}"
        raise HarvestError(f"demo step {label} ({title}) failed: {reason}") from exc


def demo_settings(workdir: Path, mirror: Path, endpoint: str, snow: dict[str, Any]) -> Settings:
    aliases = {f"file://{mirror}/{b}": f"s3://{b}" for b in (p.RAW_BUCKET, p.CURATED_BUCKET)}
    return Settings.model_validate({
        "graph": {"data_dir": str(workdir / "graph")},
        "identity": {"snowflake_account": p.ACCOUNT, "path_aliases": aliases},
        "s3": {"endpoint_url": endpoint, "region": "us-east-1", "access_key_id": "demo",
               "secret_access_key": "demo", "addressing_style": "path"},
        "snowflake": {"account": snow["account"], "user": snow["user"],
                      "password": snow["password"], "host": snow["host"], "port": snow["port"],
                      "protocol": snow["protocol"], "warehouse": "DEMO_WH", "role": "LINEAGE",
                      "database": "SNOWFLAKE", "login_timeout": 20},
        "spark": {"spool_dir": str(workdir / "spark-spool"), "app_name": "daily-events"},
    })  # fmt: skip


# --- S3 -----------------------------------------------------------------------------------


@contextlib.contextmanager
def local_s3_server() -> Iterator[str]:
    """moto's S3 server on a free loopback port (the demo's, and the tests')."""
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # moto logs every request
    port = _free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.stop()


def _s3_client(settings: Settings) -> Any:
    from lineagegraph.harvest.s3.client import make_client

    return make_client(settings.s3)


def _seed_s3(client: Any) -> None:
    for bucket in (p.RAW_BUCKET, p.CURATED_BUCKET):
        client.create_bucket(Bucket=bucket)
    for obj in p.seed_objects():
        if obj.read_by_spark:
            day, part = _day_part(obj.key)
            body = p.event_lines(day, part)
        else:
            body = bytes(obj.size)
        client.put_object(Bucket=obj.bucket, Key=obj.key, Body=body, StorageClass=obj.storage_class)
    for bucket, key in p.FOLDER_MARKERS:
        client.put_object(Bucket=bucket, Key=key, Body=b"")


def _day_part(key: str) -> tuple[str, int]:
    for day in p.DAYS:
        for part in range(p.PARTS_PER_DAY):
            if p.event_key(day, part) == key:
                return day, part
    raise ValueError(key)


def _harvest_s3(store: GraphStore, settings: Settings, bucket: str) -> None:
    from lineagegraph.harvest.s3.harvester import harvest_s3

    report = harvest_s3(store, settings, bucket)
    if report.status != "success":
        raise HarvestError(
            f"listing s3://{bucket} ended {report.status}: {'; '.join(report.errors)}"
        )


# --- Spark --------------------------------------------------------------------------------


def _run_spark(settings: Settings, client: Any, mirror: Path) -> None:
    """Sync the raw events down, run the job with the listener, sync the output up."""
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    from lineagegraph.spark import install

    for obj in p.seed_objects():
        if obj.read_by_spark:
            target = mirror / obj.bucket / obj.key
            target.parent.mkdir(parents=True, exist_ok=True)
            client.download_file(obj.bucket, obj.key, str(target))
    log4j = mirror.parent / "log4j2.properties"  # Spark's own logs: errors only
    log4j.write_text(
        "rootLogger.level = error\nrootLogger.appenderRef.stderr.ref = console\n"
        "appender.console.type = Console\nappender.console.name = console\n"
        "appender.console.target = SYSTEM_ERR\n"
        "appender.console.layout.type = PatternLayout\n"
    )
    spark = (
        SparkSession.builder.master("local[1]")
        .appName("daily-events")
        .config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile=file:{log4j}")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.memory", "1g")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    try:
        lineage = install(spark, settings=settings)
        events = spark.read.json(str(mirror / p.RAW_BUCKET / "events"))
        daily = events.groupBy("dt", "user_id").agg(
            F.count("*").alias("events"), F.round(F.sum("amount"), 2).alias("revenue")
        )
        out = mirror / p.CURATED_BUCKET / p.CURATED_PREFIX
        daily.write.mode("overwrite").partitionBy("dt").parquet(str(out))
        lineage.stop()
    finally:
        spark.stop()
    counts = lineage.counts
    lost = {k: n for k, n in counts.items() if k in _SPARK_LOSSES and n}
    if lost or not counts.get("actions_recorded"):
        raise HarvestError(f"the lineage listener did not record the Spark job: {dict(counts)}")
    for path in sorted((mirror / p.CURATED_BUCKET).rglob("*")):
        if path.is_file() and not path.name.startswith("."):  # Spark's local .crc files
            key = path.relative_to(mirror / p.CURATED_BUCKET).as_posix()
            client.upload_file(str(path), p.CURATED_BUCKET, key)


# --- Snowflake ----------------------------------------------------------------------------


@contextlib.contextmanager
def _snowflake_server() -> Iterator[dict[str, Any]]:
    import fakesnow

    # The stand-in logs every request at INFO (its server sets uvicorn's levels when it starts,
    # so quiet them after that too); sqlglot warns about SHOW commands it passes through, and
    # fakesnow cannot SHOW EXTERNAL TABLES (the harvester warns, rightly, but not for a demo).
    noisy = (
        "uvicorn",
        "uvicorn.access",
        "uvicorn.error",
        "fakesnow",
        "fakesnow.server",
        "sqlglot",
        "lineagegraph.harvest.snowflake",
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        _quiet(noisy)
        with fakesnow.server() as kwargs:
            _quiet(noisy)
            yield kwargs


def _quiet(names: tuple[str, ...]) -> None:
    for name in names:
        logging.getLogger(name).setLevel(logging.ERROR)


def _seed_snowflake(snow: dict[str, Any], after: int) -> None:
    """Record the demo's queries, the first `QUERY_GAP_MS` after `after`, and wait until the
    last one has started, so nothing in ACCESS_HISTORY lies in the future of the harvest."""
    import snowflake.connector

    queries = snowflake_queries(after + QUERY_GAP_MS)
    conn = snowflake.connector.connect(**snow)
    try:
        usage = AccountUsage(conn)
        usage.reset()
        db, schema, name = p.STAGE.split(".")
        usage.create_stage(db, schema, name, p.STAGE_URL)
        usage.add(*queries)
        usage.add_dependency(p.DASHBOARD_VIEW, "VIEW", p.MART_TABLE, "TABLE")
        _seed_columns(usage, after)
    finally:
        conn.close()
    time.sleep(max(0.0, (queries[-1].at - now_ms() + 1) / 1000))


def _seed_columns(usage: AccountUsage, now: int) -> None:
    """ACCOUNT_USAGE.COLUMNS of the staging table and the mart, a dropped column's row with the
    time it was dropped in DELETED (days before `now`), so `schema-history` has a change."""
    position: dict[str, int] = {}
    for c in p.SNOWFLAKE_COLUMNS:
        position[c.table] = position.get(c.table, 0) + 1
        dropped = None if c.dropped_days_ago is None else now - c.dropped_days_ago * DAY_MS
        usage.add_column(
            c.table, c.name, c.data_type, position[c.table],
            precision=c.precision, scale=c.scale, deleted_at=dropped,
        )  # fmt: skip


def snowflake_queries(start: int) -> list[Query]:
    """COPY the curated Parquet into staging, build the mart, create and read the view: one
    after the other from `start` (epoch ms), `QUERY_GAP_MS` apart."""
    staging_cols = ("DT", "USER_ID", "EVENTS", "REVENUE")
    at = [start + i * QUERY_GAP_MS for i in range(4)]
    return [
        Query(
            "01demo-copy", at[0],
            direct=[stage(p.STAGE)],
            modified=[modified(p.STAGING_TABLE, {c: [] for c in staging_cols})],
            text=f"COPY INTO {p.STAGING_TABLE} FROM @{p.STAGE}/{p.CURATED_PREFIX}/ "
                 "FILE_FORMAT = (TYPE = PARQUET) MATCH_BY_COLUMN_NAME = CASE_INSENSITIVE",
            query_type="COPY", parameterized_hash="demo-copy-hash",
        ),
        Query(
            "01demo-mart", at[1],
            direct=[accessed(p.STAGING_TABLE, "DT", "USER_ID", "REVENUE")],
            modified=[modified(p.MART_TABLE, {
                "DT": [(p.STAGING_TABLE, "DT")],
                "ACTIVE_USERS": [(p.STAGING_TABLE, "USER_ID")],
                "REVENUE": [(p.STAGING_TABLE, "REVENUE")],
            })],
            text=f"INSERT INTO {p.MART_TABLE} SELECT dt, COUNT(DISTINCT user_id), SUM(revenue) "
                 f"FROM {p.STAGING_TABLE} GROUP BY dt",
            query_type="INSERT", parameterized_hash="demo-mart-hash", database="ANALYTICS",
            schema="MARTS",
        ),
        Query(
            "01demo-view", at[2],
            ddl=ddl(p.DASHBOARD_VIEW, "CREATE", domain="View"),
            text=f"CREATE OR REPLACE VIEW {p.DASHBOARD_VIEW} AS SELECT dt, active_users, "
                 f"revenue / NULLIF(active_users, 0) AS revenue_per_user FROM {p.MART_TABLE}",
            query_type="CREATE_VIEW", database="ANALYTICS", schema="DASH",
        ),
        Query(
            "01demo-read", at[3],
            direct=[accessed(p.DASHBOARD_VIEW, "DT", "ACTIVE_USERS", domain="View")],
            base=[accessed(p.MART_TABLE, "DT", "ACTIVE_USERS")],
            text=f"SELECT dt, active_users FROM {p.DASHBOARD_VIEW} ORDER BY dt",
            query_type="SELECT", parameterized_hash="demo-dashboard-hash", user="BI_TOOL",
            database="ANALYTICS", schema="DASH",
        ),
    ]  # fmt: skip


def _harvest_snowflake(store: GraphStore, settings: Settings) -> None:
    from lineagegraph.harvest.snowflake.harvester import connect, harvest

    connection = connect(settings.snowflake)
    try:
        report = harvest(store, settings, connection)
    finally:
        connection.close()
    # The demo's rows are all well formed and its stage exists: anything else lost lineage.
    lost = {
        k: report.counts[k] for k in ("rows_malformed", "stage_placeholders") if report.counts[k]
    }
    if lost:
        raise HarvestError(f"the Snowflake harvest lost lineage: {lost}; {report.warnings}")


# --- questions ----------------------------------------------------------------------------


def _ask(store: GraphStore, settings: Settings) -> DemoResult:
    raw_object = s3_file_urn(p.RAW_BUCKET, p.event_key(p.DAYS[0], 0))
    raw_dataset = store.read("demo_dataset_of_file", {"urn": raw_object})[0]["dataset"]
    dashboard = snowflake_urn(p.ACCOUNT, p.DASHBOARD_VIEW, from_metadata=True)
    staging = snowflake_urn(p.ACCOUNT, p.STAGING_TABLE, from_metadata=True)
    mart = snowflake_urn(p.ACCOUNT, p.MART_TABLE, from_metadata=True)
    found = paths(store, raw_dataset, dashboard, max_depth=10, limit=1)
    options = build_options(settings.reports, "orphans")
    return DemoResult(
        settings=settings,
        raw_object=raw_object,
        raw_dataset=raw_dataset,
        dashboard=dashboard,
        staging=staging,
        mart=mart,
        mart_revenue=column_urn(mart, "REVENUE"),
        path=found[0] if found else None,
        impact=impact(store, staging),
        orphans=run_report(store, options),
        seconds=0.0,
    )


def _importable(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
