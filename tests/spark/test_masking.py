"""Masked column lineage in a real local Spark: a job that writes sha2(email) and one that
writes email as it is, an aggregate that only counts, and the same through emitted OpenLineage
events read back by the OpenLineage harvester."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pyspark.sql import functions as F

from lineagegraph.graph.store import GraphStore
from lineagegraph.harvest.openlineage import harvest_openlineage
from lineagegraph.spark import SparkLineage, install


def customers(spark: Any, path: Path) -> None:
    spark.createDataFrame(
        [(1, "ann@example.com", "NL"), (2, "bob@example.com", "BE")], ["id", "email", "country"]
    ).write.mode("overwrite").parquet(str(path))


def masked_feeds(graph: GraphStore) -> dict[tuple[str, str], tuple[list[str], bool]]:
    rows = graph.execute(
        "MATCH (a:Column)-[e:FEEDS]->(b:Column) RETURN a.urn, b.urn, e.masked_by, e.plain",
        write=False,
    ).rows
    return {(a, b): (masked, plain) for a, b, masked, plain in rows}


def jobs(spark: Any, tmp_path: Path) -> tuple[str, str, str, str]:
    customers(spark, tmp_path / "customers")
    df = spark.read.parquet(f"file://{tmp_path}/customers")
    df.select("id", F.sha2(F.lower("email"), 256).alias("email")).write.parquet(
        f"file://{tmp_path}/hashed"
    )
    df.select("id", "email").write.parquet(f"file://{tmp_path}/copied")
    df.groupBy("country").agg(
        F.count("email").alias("emails"), F.concat_ws(",", F.collect_list("email")).alias("all")
    ).write.parquet(f"file://{tmp_path}/counted")
    return tuple(
        f"file://{tmp_path}/{name}" for name in ("customers", "hashed", "copied", "counted")
    )  # type: ignore[return-value]


def expected(src: str, hashed: str, copied: str, counted: str) -> dict[Any, Any]:
    return {
        (f"{src}#id", f"{hashed}#id"): ([], True),
        (f"{src}#email", f"{hashed}#email"): (["SHA2"], False),
        (f"{src}#id", f"{copied}#id"): ([], True),
        (f"{src}#email", f"{copied}#email"): ([], True),
        (f"{src}#country", f"{counted}#country"): ([], True),
        (f"{src}#email", f"{counted}#emails"): (["COUNT"], False),
        (f"{src}#email", f"{counted}#all"): ([], True),  # collect_list keeps every value
    }


def test_sha2_and_count_mask_and_a_copy_stays_plain(
    spark: Any, lineage: SparkLineage, graph: GraphStore, tmp_path: Path
) -> None:
    urns = jobs(spark, tmp_path)
    assert lineage.flush()
    assert masked_feeds(graph) == expected(*urns)


def test_emitted_openlineage_carries_the_masking(
    spark: Any, tmp_path: Path, embedded_dir: Path, graph: GraphStore, settings_for: Any
) -> None:
    handle = install(spark, settings=settings_for(tmp_path, embedded_dir, emit="openlineage"))
    urns = jobs(spark, tmp_path)
    handle.stop()
    events = [
        json.loads(line)
        for file in (tmp_path / "openlineage").glob("*.jsonl")
        for line in file.read_text().splitlines()
    ]
    steps = [
        entry.get("transformations")
        for event in events
        for output in event["outputs"]
        for spec in output["facets"].get("columnLineage", {}).get("fields", {}).values()
        for entry in spec["inputFields"]
        if entry.get("transformations")
    ]
    assert sorted(s[0]["description"] for s in steps) == ["COUNT", "SHA2"]
    assert all(s[0]["type"] == "DIRECT" and s[0]["masking"] is True for s in steps)
    run, _ = harvest_openlineage(graph, tmp_path / "openlineage")
    assert run.status == "success"
    assert masked_feeds(graph) == expected(*urns)
