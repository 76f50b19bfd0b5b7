"""Replaying a spool that a killed driver or a bad disk left damaged: every good record is
written, every bad line is reported by file and line, kept aside and never replayed again."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from lineagegraph.cli import cli
from lineagegraph.graph.store import GraphStore
from lineagegraph.harvest.spark import replay
from lineagegraph.spark.actions import DatasetRef, SparkAction


def record(n: int) -> dict[str, Any]:
    return SparkAction(
        app="nightly",
        app_id="app-1",
        user=None,
        func="save",
        execution_id=n,
        at=1_000 + n,
        duration_ms=5,
        command="InsertIntoHadoopFsRelationCommand",
        mode="Overwrite",
        output=DatasetRef(f"s3://lake/out/{n}", "Dataset"),
        inputs=[DatasetRef(f"s3://lake/in/{n}", "Dataset")],
    ).to_record()


def line(n: int) -> bytes:
    return json.dumps(record(n)).encode()


def test_a_damaged_spool_is_replayed_around_its_bad_lines(
    store: GraphStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("lineagegraph.jsonlines.MAX_TEXT_CHARS", 300_000)
    spool = tmp_path / "spool"
    spool.mkdir()
    bad = [
        b"[" * 100_000,  # 2
        line(90).replace(b"nightly", b"night\xffly"),  # 3
        b'{"x": "' + b"y" * 400_000 + b'"}',  # 4: never held whole, not kept
        b"42",  # 5
        b'{"type": "action", "v": 1}',  # 6
    ]
    cut = line(3)[:-12]  # 8: the driver was killed mid-write
    (spool / "a.jsonl").write_bytes(b"\n".join([line(1), *bad, line(2), cut]))
    (spool / "b.jsonl").write_bytes(line(4) + b"\n")

    run, report = replay(store, spool)

    a = spool / "a.jsonl"
    assert [p.split(": ", 1)[0] for p in report.problems] == [
        f"{a}:{n}" for n in (2, 3, 4, 5, 6, 8)
    ]
    assert report.problems[:3] == [
        f"{a}:2: malformed JSON: nested too deep",
        f"{a}:3: not UTF-8: byte 0xff at column {bad[1].index(0xFF) + 1}",
        f"{a}:4: longer than 300,000 characters: dropped",
    ]
    assert run.status == "partial" and run.counts["records_rejected"] == 6
    assert (report.files, report.actions) == (2, 3)
    flows = store.execute("MATCH (a)-[:FLOWS_TO]->(b) RETURN a.urn, b.urn", {}, write=False).rows
    assert sorted(map(tuple, flows)) == [
        (f"s3://lake/in/{n}", f"s3://lake/out/{n}") for n in (1, 2, 4)
    ]
    assert sorted(p.name for p in spool.iterdir()) == ["a.jsonl.rejected"]
    kept = (spool / "a.jsonl.rejected").read_bytes()
    assert kept == b"\n".join([bad[0], bad[1], bad[3], bad[4], cut]) + b"\n"  # byte for byte

    again, _ = replay(store, spool)  # the rejected lines are never replayed again
    assert again.status == "success" and again.counts["records_rejected"] == 0


def test_the_command_replays_past_a_half_written_line(tmp_path: Path) -> None:
    spool = tmp_path / "spool"
    spool.mkdir()
    (spool / "a.jsonl").write_bytes(line(1) + b"\n\xff\n" + b"[" * 100_000 + b"\n" + line(2)[:9])
    args = ["--data-dir", str(tmp_path / "g"), "harvest", "spark", "--spool", str(spool)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    for number, reason in ((2, "not UTF-8"), (3, "nested too deep"), (4, "malformed JSON")):
        assert f"warning: {spool / 'a.jsonl'}:{number}: " in result.output
        assert reason in result.output
    assert "1 files, 1 actions" in result.output and ": partial" in result.output


def test_records_of_the_wrong_shape_are_rejected_not_written(
    store: GraphStore, tmp_path: Path
) -> None:
    """Valid JSON with values the graph cannot take: rejected one by one, before any write,
    so no replay fails on them again and again."""
    spool = tmp_path / "spool"
    spool.mkdir()
    changes: list[tuple[str, Any, str]] = [
        ("at", "x", "at is 'x', not a 64-bit integer"),
        ("at", 2**70, "at is 1180591620717411303424, not a 64-bit integer"),
        ("inputs", [{"urn": "nonsense", "kind": "Dataset"}], "not a urn: 'nonsense'"),
        ("output", {"urn": "s3://lake/o", "kind": "Bogus"}, "output.kind is 'Bogus', not one of"),
        ("columns", [1], "columns[0] is 1, not text"),
        ("links", [{"source": "s3://lake/in/1", "source_column": 5, "column": "c"}],
         "links[0].source_column is 5, not text"),
        ("links", [{"source": "s3://lake/in/1", "source_column": "a", "column": "c",
                    "masked_by": ["SHA2", 5]}], "links[0].masked_by[1] is 5, not text"),
        ("links", [{"source": "s3://lake/in/1", "source_column": "a", "column": "c",
                    "masked_by": "SHA2"}], "links[0].masked_by is 'SHA2', not a list"),
        ("user", True, "user is True, not text"),
    ]  # fmt: skip
    records = []
    for n, (key, value, _) in enumerate(changes):
        records.append({**record(n), key: value})
    lines = [json.dumps(r) for r in [*records, record(99)]]
    (spool / "a.jsonl").write_text("\n".join(lines) + "\n")

    run, report = replay(store, spool)
    a = spool / "a.jsonl"
    assert len(report.problems) == len(changes)
    for n, (problem, (_, _, reason)) in enumerate(zip(report.problems, changes, strict=True)):
        assert problem.startswith(f"{a}:{n + 1}: not a Spark action record: {reason}")
    assert run.status == "partial" and report.actions == 1
    flows = store.execute("MATCH (a)-[:FLOWS_TO]->(b) RETURN a.urn, b.urn", {}, write=False).rows
    assert [tuple(f) for f in flows] == [("s3://lake/in/99", "s3://lake/out/99")]
