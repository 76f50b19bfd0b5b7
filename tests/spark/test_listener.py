"""The listener in a real local Spark: what each kind of action puts in the graph."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from pyspark.sql import functions as F

from lineagegraph.cli import cli
from lineagegraph.errors import ConfigError
from lineagegraph.graph.store import GraphStore, open_store
from lineagegraph.harvest.openlineage import harvest_openlineage
from lineagegraph.settings import Settings
from lineagegraph.spark import SparkLineage, install

APP = "lineagegraph-tests"


def rows(graph: GraphStore, cypher: str, **params: Any) -> list[list[Any]]:
    return graph.execute(cypher, params, write=False).rows


def flows(graph: GraphStore) -> set[tuple[str, str]]:
    return {(a, b) for a, b in rows(graph, "MATCH (a)-[:FLOWS_TO]->(b) RETURN a.urn, b.urn")}


def feeds(graph: GraphStore) -> set[tuple[str, str]]:
    return {(a, b) for a, b in rows(graph, "MATCH (a)-[:FEEDS]->(b) RETURN a.urn, b.urn")}


def url(path: Path) -> str:
    return f"file://{path}"


def people(spark: Any, path: Path) -> None:
    """Input written without the listener's help: in-memory data has no source to name."""
    spark.createDataFrame(
        [(1, "ann", "NL", 10.0), (2, "bob", "BE", 20.0), (3, "cy", "NL", 5.0)],
        ["id", "name", "country", "spend"],
    ).write.mode("overwrite").parquet(str(path))


def test_parquet_read_and_write_with_column_lineage(
    spark: Any, lineage: SparkLineage, graph: GraphStore, tmp_path: Path
) -> None:
    people(spark, tmp_path / "people")
    out = tmp_path / "out"
    df = spark.read.parquet(url(tmp_path / "people"))
    df.select(F.col("id").alias("person"), F.upper("name").alias("label")).write.mode(
        "overwrite"
    ).parquet(url(out))
    assert lineage.flush()

    src, dst = f"file://{tmp_path}/people", f"file://{out}"
    assert flows(graph) == {(src, dst)}
    assert feeds(graph) == {(f"{src}#id", f"{dst}#person"), (f"{src}#name", f"{dst}#label")}
    [[urn, mode, command, runs]] = rows(
        graph,
        "MATCH (t:Transformation)-[:WRITES_TO]->(:Asset {urn: $dst}) "
        "RETURN t.urn, t.write_mode, t.spark_command, t.runs",
        dst=dst,
    )
    assert urn == f"spark://{APP}/{dst}"
    assert (mode, command, runs) == ("Overwrite", "InsertIntoHadoopFsRelationCommand", 1)
    assert rows(graph, "MATCH (:Transformation {urn: $t})-[:READS_FROM]->(a) RETURN a.urn", t=urn)
    assert lineage.counts["actions_recorded"] == 2  # the in-memory write names only its output
    # the output's schema, with the types of the query that wrote it
    assert rows(
        graph,
        "MATCH (:Asset {urn: $dst})-[:HAS_SCHEMA]->(v:SchemaVersion) RETURN v.source, v.fields",
        dst=dst,
    ) == [["spark", json.dumps([["person", "bigint"], ["label", "string"]])]]


def test_csv_join_and_aggregation_follow_expression_ids(
    spark: Any, lineage: SparkLineage, graph: GraphStore, tmp_path: Path
) -> None:
    people(spark, tmp_path / "people")
    spark.createDataFrame([("NL", "Netherlands"), ("BE", "Belgium")], ["code", "label"]).write.csv(
        str(tmp_path / "countries"), header=True
    )
    persons = spark.read.parquet(str(tmp_path / "people"))
    countries = spark.read.csv(str(tmp_path / "countries"), header=True)
    joined = persons.join(countries, persons.country == countries.code)
    joined.groupBy("label").agg(F.sum("spend").alias("total")).write.mode("append").csv(
        str(tmp_path / "report"), header=True
    )
    assert lineage.flush()

    p, c, r = (f"file://{tmp_path}/{n}" for n in ("people", "countries", "report"))
    assert {(p, r), (c, r)} <= flows(graph)
    # Direct lineage only: the join keys shape the result but do not feed a column.
    assert {(a, b) for a, b in feeds(graph) if b.startswith(r)} == {
        (f"{c}#label", f"{r}#label"),
        (f"{p}#spend", f"{r}#total"),
    }
    [[mode]] = rows(
        graph, "MATCH (t:Transformation {urn: $t}) RETURN t.write_mode", t=f"spark://{APP}/{r}"
    )
    assert mode == "Append"


def test_a_partition_read_is_the_folded_dataset(
    spark: Any, lineage: SparkLineage, graph: GraphStore, tmp_path: Path
) -> None:
    events = tmp_path / "events"
    spark.createDataFrame([("2024-01-01", 1), ("2024-01-02", 2)], ["dt", "n"]).write.partitionBy(
        "dt"
    ).parquet(str(events))
    spark.createDataFrame([(3,)], ["n"]).write.parquet(str(tmp_path / "extra"))
    day = spark.read.parquet(str(events / "dt=2024-01-01"), str(tmp_path / "extra"))
    day.write.parquet(str(tmp_path / "day"))
    assert lineage.flush()

    out = f"file://{tmp_path}/day"
    assert {(f"file://{events}", out), (f"file://{tmp_path}/extra", out)} <= flows(graph)
    assert (f"file://{tmp_path}/extra#n", f"{out}#n") in feeds(graph)


def test_save_as_table_and_insert_overwrite(
    spark: Any, lineage: SparkLineage, graph: GraphStore, tmp_path: Path
) -> None:
    people(spark, tmp_path / "people")
    spark.read.parquet(str(tmp_path / "people")).select("id", "spend").write.mode(
        "overwrite"
    ).saveAsTable("lg.spend")
    spark.sql("CREATE TABLE lg.doubled (id BIGINT, spend DOUBLE) USING parquet")
    spark.sql("INSERT OVERWRITE TABLE lg.doubled SELECT id, spend * 2 FROM lg.spend")
    assert lineage.flush()

    location = spark.sql("DESCRIBE TABLE EXTENDED lg.spend").where("col_name = 'Location'")
    spend = "file://" + location.first()["data_type"].removeprefix("file:")
    doubled = spend.rsplit("/", 1)[0] + "/doubled"
    assert {(f"file://{tmp_path}/people", spend), (spend, doubled)} <= flows(graph)
    assert (f"{spend}#spend", f"{doubled}#spend") in feeds(graph)
    [[alias]] = rows(graph, "MATCH (d:Dataset {urn: $u}) RETURN d.spark_table", u=spend)
    assert alias == "lg.spend"
    # saveAsTable runs a CTAS, which runs a file write: one action, counted once.
    [[runs, mode]] = rows(
        graph,
        "MATCH (t:Transformation {urn: $t}) RETURN t.runs, t.write_mode",
        t=f"spark://{APP}/{spend}",
    )
    assert runs == 1 and mode is not None
    assert lineage.counts["actions_nested"] == 2
    [[mode]] = rows(
        graph,
        "MATCH (t:Transformation {urn: $t}) RETURN t.write_mode",
        t=f"spark://{APP}/{doubled}",
    )
    assert mode == "Overwrite"


def test_cte_and_union_map_columns_by_position(
    spark: Any, lineage: SparkLineage, graph: GraphStore, tmp_path: Path
) -> None:
    people(spark, tmp_path / "people")
    spark.read.parquet(str(tmp_path / "people")).createOrReplaceTempView("p")
    spark.createDataFrame([("NL",)], ["code"]).write.parquet(str(tmp_path / "codes"))
    spark.read.parquet(str(tmp_path / "codes")).createOrReplaceTempView("codes")
    out = tmp_path / "names"
    spark.sql(  # a table read only in a subquery still counts: it shapes the output
        "WITH nl AS (SELECT id, name FROM p WHERE country IN (SELECT code FROM codes)) "
        "SELECT id AS k, name AS who FROM nl UNION ALL SELECT id + 100, country FROM p"
    ).write.parquet(str(out))
    assert lineage.flush()

    src, dst = f"file://{tmp_path}/people", f"file://{out}"
    assert (f"file://{tmp_path}/codes", dst) in flows(graph)
    assert feeds(graph) >= {
        (f"{src}#id", f"{dst}#k"),
        (f"{src}#name", f"{dst}#who"),
        (f"{src}#country", f"{dst}#who"),
    }


def test_reads_without_output_are_noise(
    spark: Any, lineage: SparkLineage, graph: GraphStore, tmp_path: Path
) -> None:
    people(spark, tmp_path / "people")
    spark.createDataFrame([("a", 1)], ["k", "v"]).write.csv(str(tmp_path / "csv"), header=True)
    assert lineage.flush()
    before = rows(graph, "MATCH (t:Transformation) RETURN count(t)")

    df = spark.read.csv(str(tmp_path / "csv"), header=True, inferSchema=True)  # inference read
    df.collect()
    df.show()
    df.head()
    df.createOrReplaceTempView("noise")
    spark.sql("SELECT count(*) FROM noise").collect()
    assert lineage.flush()

    assert rows(graph, "MATCH (t:Transformation) RETURN count(t)") == before
    ignored = sum(v for k, v in lineage.counts.items() if k.startswith("actions_ignored"))
    assert ignored >= 4


def test_a_failed_action_is_counted_on_the_run_not_drawn(
    spark: Any, settings: Settings, graph: GraphStore
) -> None:
    handle = install(spark, settings=settings)
    with pytest.raises(Exception, match="boom"):
        spark.sql("SELECT raise_error('boom')").collect()
    handle.stop()

    [[failed, status]] = rows(
        graph, "MATCH (h:HarvestRun {system: 'spark'}) RETURN h.count_actions_failed, h.status"
    )
    assert (failed, status) == (1, "success")
    assert rows(graph, "MATCH (t:Transformation) RETURN count(t)") == [[0]]


def test_unreachable_graph_spools_then_replays_once(
    spark: Any, tmp_path: Path, embedded_dir: Path, unused_port: int, settings_for: Any
) -> None:
    settings = settings_for(tmp_path, embedded_dir)
    settings.graph.uri = f"bolt://127.0.0.1:{unused_port}"  # nothing listens there
    handle = install(spark, settings=settings)
    people(spark, tmp_path / "people")
    spark.read.parquet(str(tmp_path / "people")).write.parquet(str(tmp_path / "copy"))
    with pytest.raises(Exception, match="boom"):
        spark.sql("SELECT raise_error('boom')").collect()
    handle.stop()

    spool = tmp_path / "spool"
    [file] = list(spool.glob("*.jsonl"))
    records = [json.loads(line) for line in file.read_text().splitlines()]
    assert [r["type"] for r in records] == ["action", "action", "failure"]
    assert handle.counts["actions_spooled"] == 3
    saved = file.read_text()

    data_dir = tmp_path / "replayed"
    runner = CliRunner()
    result = runner.invoke(
        cli, ["--data-dir", str(data_dir), "harvest", "spark", "--spool", str(spool)]
    )
    assert result.exit_code == 0, result.output
    assert "1 files, 2 actions, 1 failed actions" in result.output
    assert not list(spool.glob("*.jsonl"))  # deleted only after the write

    def snapshot() -> tuple[Any, ...]:
        with open_store(
            settings.graph.model_copy(
                update={"uri": None, "data_dir": data_dir, "graph_name": "lineage"}
            )
        ) as store:
            return (
                rows(store, "MATCH (n) WHERE NOT n:HarvestRun RETURN count(n)"),
                rows(store, "MATCH ()-[e]->() RETURN count(e)"),
                rows(store, "MATCH (t:Transformation) RETURN t.urn, t.runs ORDER BY t.urn"),
                rows(store, "MATCH ()-[f:FLOWS_TO]->() RETURN f.runs"),
            )  # fmt: skip

    first = snapshot()
    assert first[3] == [[1]]
    file.write_text(saved)  # the same records replayed again change nothing
    assert (
        runner.invoke(
            cli, ["--data-dir", str(data_dir), "harvest", "spark", "--spool", str(spool)]
        ).exit_code
        == 0
    )
    assert snapshot() == first


def test_an_unwritable_spool_directory_fails_at_install(
    spark: Any, tmp_path: Path, settings_for: Any
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    settings = settings_for(tmp_path, tmp_path / "g", spool_dir=blocker / "spool")
    with pytest.raises(ConfigError, match=r"spool directory .*a-file/spool.* is not writable"):
        install(spark, settings=settings)


def test_emitted_openlineage_ingests_to_the_same_lineage(
    spark: Any,
    tmp_path: Path,
    embedded_dir: Path,
    graph: GraphStore,
    settings: Settings,
    settings_for: Any,
) -> None:
    emit = settings_for(tmp_path, embedded_dir, emit="openlineage")
    handle = install(spark, settings=emit)
    people(spark, tmp_path / "people")
    spark.read.parquet(str(tmp_path / "people")).groupBy("country").agg(
        F.max("spend").alias("top")
    ).write.parquet(str(tmp_path / "top"))
    handle.stop()

    [file] = list((tmp_path / "openlineage").glob("*.jsonl"))
    events = [json.loads(line) for line in file.read_text().splitlines()]
    assert {e["eventType"] for e in events} == {"COMPLETE"}
    run, report = harvest_openlineage(graph, tmp_path / "openlineage")
    assert run.status == "success" and report.complete == 2

    src, dst = f"file://{tmp_path}/people", f"file://{tmp_path}/top"
    assert flows(graph) == {(src, dst)}
    assert {(f"{src}#spend", f"{dst}#top"), (f"{src}#country", f"{dst}#country")} == feeds(graph)


def test_an_unknown_plan_node_keeps_the_table_lineage(
    spark: Any,
    lineage: SparkLineage,
    graph: GraphStore,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    people(spark, tmp_path / "people")
    caplog.set_level(logging.WARNING, logger="lineagegraph.spark")
    df = spark.read.parquet(str(tmp_path / "people")).select("id")
    for name in ("a", "b"):  # observe() adds a CollectMetrics node the listener does not know
        df.observe(name, F.count(F.lit(1)).alias("rows")).write.parquet(str(tmp_path / name))
    assert lineage.flush()

    src = f"file://{tmp_path}/people"
    assert {(src, f"file://{tmp_path}/a"), (src, f"file://{tmp_path}/b")} <= flows(graph)
    assert lineage.counts["actions_with_unknown_nodes"] == 2
    assert (f"{src}#id", f"file://{tmp_path}/a#id") in feeds(graph)  # passed through
    logged = [r.getMessage() for r in caplog.records if "CollectMetrics" in r.getMessage()]
    assert len(logged) == 1  # once per node class, not per action


def test_jdbc_sources_and_targets_are_named_by_their_options(
    spark: Any, lineage: SparkLineage, graph: GraphStore, tmp_path: Path
) -> None:
    db = f"jdbc:derby:memory:lg{tmp_path.name};create=true"
    driver = {
        "driver": "org.apache.derby.iapi.jdbc.AutoloadedDriver",
        "user": "app",
        "password": "secret",
    }
    people(spark, tmp_path / "people")
    spark.read.parquet(str(tmp_path / "people")).write.jdbc(db, "PEOPLE", properties=driver)
    spark.read.jdbc(db, "PEOPLE", properties=driver).write.parquet(str(tmp_path / "back"))
    assert lineage.flush()

    table = f"derby://memory:lg{tmp_path.name}/PEOPLE"
    people_urn = f"file://{tmp_path}/people"
    assert {(people_urn, table), (table, f"file://{tmp_path}/back")} <= flows(graph)
    [[labels]] = rows(graph, "MATCH (t {urn: $u}) RETURN labels(t)", u=table)
    assert "Table" in labels
    text = json.dumps(rows(graph, "MATCH (n) RETURN n"))
    assert "secret" not in text and "create=true" not in text
