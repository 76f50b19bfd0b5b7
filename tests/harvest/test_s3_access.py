"""`harvest s3-access` (harvest/s3/access.py): log files on moto over HTTP and in a local
directory become readers of the datasets their keys fold into, with exact read counts however
often the same logs are read again."""

from __future__ import annotations

import gzip
import os
import time
from pathlib import Path
from typing import Any, Literal

import pytest
from access_log_fixtures import AWS_EXAMPLE, ROLE, access_line, cloudtrail_file, cloudtrail_record
from botocore.client import BaseClient
from click.testing import CliRunner
from s3_fixtures import new_bucket, s3_settings

from lineagegraph.cli import cli
from lineagegraph.graph.settings import GraphSettings
from lineagegraph.graph.store import GraphStore, open_store
from lineagegraph.harvest.s3 import access_tally
from lineagegraph.harvest.s3.access import harvest_s3_access
from lineagegraph.harvest.s3.harvester import harvest_s3
from lineagegraph.questions.lineage import impact
from lineagegraph.reports.options import build_options
from lineagegraph.reports.orphans import run_report
from lineagegraph.reports.presentation import iso
from lineagegraph.settings import ReportSettings, Settings

DAY = 86_400_000
T0 = 1_717_200_000_000  # 2024-06-01T00:00:00Z
ANALYST = "arn:aws:iam::123456789012:user/ana lyst"  # IAM names may not hold spaces; ours do


def readers(store: GraphStore) -> dict[tuple[str, str], dict[str, Any]]:
    """(transformation urn, asset urn) -> the READS_FROM edge's counts, for s3-access readers."""
    rows = store.execute(
        "MATCH (t:Transformation {system: 's3-access'})-[e:READS_FROM]->(a:Asset) "
        "RETURN t.urn AS t, a.urn AS a, e.read_count AS n, e.first_seen AS first, "
        "e.last_seen AS last, t.name AS name",
        write=False,
    ).records()
    return {(r["t"], r["a"]): {k: r[k] for k in ("n", "first", "last", "name")} for r in rows}


def log(lines: list[str]) -> bytes:
    return ("\n".join(lines) + "\n").encode()


def test_logs_in_a_bucket_become_readers_with_exact_counts_and_reruns_add_nothing(
    store: GraphStore, moto: BaseClient, moto_endpoint: str
) -> None:
    logs, lake = new_bucket(moto, "logs"), "lake"
    first = log([
        access_line(lake, "raw/orders/dt=2024-06-01/part-0.parquet", T0),
        access_line(lake, "raw/orders/dt=2024-06-02/part 1.parquet", T0 + DAY),
        access_line(lake, "raw/orders/x.csv", T0 - DAY, operation="REST.HEAD.OBJECT"),
        access_line(lake, "raw/orders/y.csv", T0, operation="REST.PUT.OBJECT"),
        access_line(lake, "raw/clicks/café.json", T0, "-", ip="203.0.113.9"),
        access_line(lake, "raw/orders/z.csv", T0)[:80],
    ])  # fmt: skip
    moto.put_object(Bucket=logs, Key="s3/2024-06-02-00-00-00-AAAA", Body=first)
    trail = cloudtrail_file([
        cloudtrail_record(lake, "raw/orders/dt=2024-06-03/p.parquet", T0 + 2 * DAY, ANALYST),
        cloudtrail_record(lake, "raw/orders/src.csv", T0 + 3 * DAY, ANALYST, event="CopyObject"),
        cloudtrail_record(lake, "raw/orders/w.csv", T0, ANALYST, event="PutObject"),
    ])  # fmt: skip
    moto.put_object(Bucket=logs, Key="trail/123_CloudTrail_us-east-1_X.json.gz", Body=trail)
    settings = s3_settings(moto_endpoint)

    run, report = harvest_s3_access(store, settings, f"s3://{logs}/")
    assert run.status == "success"
    role, analyst = f"s3-access://{lake}/{ROLE}", f"s3-access://{lake}/{ANALYST}"
    orders, clicks = f"s3://{lake}/raw/orders", f"s3://{lake}/raw/clicks"
    expected = {
        (role, orders): {"n": 3, "first": T0 - DAY, "last": T0 + DAY, "name": ROLE},
        (f"s3-access://{lake}/203.0.113.9", clicks): {
            "n": 1, "first": T0, "last": T0, "name": "203.0.113.9"},
        (analyst, orders): {"n": 2, "first": T0 + 2 * DAY, "last": T0 + 3 * DAY, "name": ANALYST},
    }  # fmt: skip
    assert readers(store) == expected
    assert report.reads == 6 and report.read_files == 2
    assert report.problems.named == [
        f"s3://{logs}/s3/2024-06-02-00-00-00-AAAA:6: cut short or malformed: a line has at "
        "least 18 fields, up to the user agent"
    ]

    again, report = harvest_s3_access(store, settings, f"s3://{logs}/", full=True)
    assert again.status == "success" and report.counted_before == 2 and report.read_files == 0
    assert readers(store) == expected

    late = log([access_line(lake, "raw/orders/a.csv", T0 - 2 * DAY)])  # delivered late
    moto.put_object(Bucket=logs, Key="s3/2024-06-01-00-00-00-LATE", Body=late)
    harvest_s3_access(store, settings, f"s3://{logs}/")
    expected[role, orders] |= {"n": 4, "first": T0 - 2 * DAY}
    assert readers(store) == expected


def test_an_unreadable_file_counts_nothing_the_run_is_partial_and_a_rerun_counts_it_once(
    store: GraphStore, tmp_path: Path
) -> None:
    good = log([access_line("lake", "t/a.csv", T0), access_line("lake", "t/b.csv", T0)])
    (tmp_path / "a.log").write_bytes(good)
    # Megabytes of lines: the first of them are read (and tallied) before the cut is met.
    lines = [access_line("lake", f"t/{i}.csv", T0 + i * 1000, f"r{i % 7}") for i in range(9000)]
    whole = gzip.compress(log([access_line("lake", "t/c.csv", T0), *lines]))
    (tmp_path / "b.log.gz").write_bytes(whole[: len(whole) * 3 // 4])
    settings = Settings()

    run, report = harvest_s3_access(store, settings, str(tmp_path))
    assert run.status == "partial" and run.watermark is None
    assert report.failed_files[0].startswith(f"{tmp_path / 'b.log.gz'}: unreadable")
    assert readers(store)[f"s3-access://lake/{ROLE}", "s3://lake/t"]["n"] == 2

    (tmp_path / "b.log.gz").write_bytes(whole)
    run, report = harvest_s3_access(store, settings, str(tmp_path))
    assert run.status == "success" and report.counted_before == 1
    assert readers(store)[f"s3-access://lake/{ROLE}", "s3://lake/t"]["n"] == 3
    assert readers(store)["s3-access://lake/r6", "s3://lake/t"]["n"] == 9000 // 7


def test_files_delivered_before_the_overlap_window_are_not_read_again(
    store: GraphStore, tmp_path: Path
) -> None:
    settings = Settings(s3={"access_overlap_hours": 1})
    newest = tmp_path / "1.log"
    newest.write_bytes(log([access_line("lake", "t/a", T0)]))
    os.utime(newest, (T0 / 1000, T0 / 1000))
    harvest_s3_access(store, settings, str(tmp_path))
    for name, age_ms in (("old.log", 2 * 3_600_000), ("recent.log", 1_800_000)):
        path = tmp_path / name
        path.write_bytes(log([access_line("lake", "t/a", T0)]))
        at = (T0 - age_ms) / 1000
        os.utime(path, (at, at))

    _, report = harvest_s3_access(store, settings, str(tmp_path))
    assert (report.files, report.counted_before, report.read_files) == (2, 1, 1)
    assert readers(store)[f"s3-access://lake/{ROLE}", "s3://lake/t"]["n"] == 2
    marks = store.execute("MATCH (m:S3AccessLog) RETURN m.key AS k", write=False).records()
    kept = sorted(str(tmp_path / name) for name in ("1.log", "recent.log"))
    assert sorted(r["k"] for r in marks) == kept


def test_the_command_reads_a_directory_and_names_bad_lines(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "x.log").write_bytes(log([access_line("lake", "t/a", T0), "garbage line"]))
    args = ["--data-dir", str(tmp_path / "g"), "harvest", "s3-access", str(logs)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert f"warning: {logs / 'x.log'}:2: not an S3 server access log line" in result.output
    assert "1 log files read (0 counted before), 1 reads by 1 readers" in result.output


def test_a_prefix_only_a_role_reads_is_consumed_until_the_reads_stop_for_the_window(
    store: GraphStore, moto: BaseClient, moto_endpoint: str
) -> None:
    lake, logs = new_bucket(moto, "lake"), new_bucket(moto, "logs")
    for key in ("raw/orders/dt=2024-06-01/a.parquet", "raw/clicks/b.json"):
        moto.put_object(Bucket=lake, Key=key, Body=b"x" * 1000)
    settings = s3_settings(moto_endpoint)
    harvest_s3(store, settings, lake)
    now = int(time.time() * 1000)
    key = "raw/orders/dt=2024-06-01/a.parquet"
    daily = [access_line(lake, key, now - d * DAY) for d in range(5)]  # a role, every day
    moto.put_object(Bucket=logs, Key="s3/today", Body=log(daily))
    harvest_s3_access(store, settings, f"s3://{logs}/s3/")

    def report(kind: Literal["orphans", "cost"], as_of: int) -> dict[str, dict[str, Any]]:
        options = build_options(ReportSettings(), kind, as_of=as_of, by="dataset")
        found = run_report(store, options)
        return {row[1]: dict(zip(found.columns, row, strict=True)) for row in found.rows}

    orders, clicks = f"s3://{lake}/raw/orders", f"s3://{lake}/raw/clicks"
    assert set(report("orphans", now + 1000)) == {clicks}
    cost = report("cost", now + 1000)
    assert cost[orders]["readers"] == ROLE and cost[orders]["orphaned_objects"] == 0
    assert cost[orders]["last_read"] == iso(now)
    assert cost[clicks]["readers"] is None

    later = now + 91 * DAY  # no read for the whole lookback window: an orphan, its reader named
    orphans = report("orphans", later)
    assert set(orphans) == {clicks, orders}
    assert (orphans[orders]["readers"], orphans[orders]["last_read"]) == (ROLE, iso(now))

    affected = impact(store, orders)
    reader = f"s3-access://{lake}/{ROLE}"
    assert [(t.urn, t.system) for t in affected.transformations] == [(reader, "s3-access")]


def _awkward_logs(root: Path) -> None:
    """Log files of every kind: access logs with awkward keys, principals and bad lines, a
    gzipped one, a CloudTrail file, and a gzip cut short (unreadable: counts for nothing)."""
    root.mkdir()
    keys = ["raw/a b/dt=2024-06-01/x.csv", "raw/100%/y+z.csv", "raw/café/日本.json", "top.csv"]
    who = [ROLE, "-", ANALYST.replace(" ", "_"), "79a59df900b949e55d96a1e698fbacedfd6e09d98e"]
    for n in range(12):
        lines = [
            access_line("lake", keys[(n + i) % 4], T0 + (n * 7 + i) * 60_000, who[(n * i) % 4],
                        ip=f"203.0.113.{i}", operation=("REST.GET.OBJECT", "REST.HEAD.OBJECT",
                        "REST.PUT.OBJECT")[i % 3], agent='q "x" y')
            for i in range(40)
        ]  # fmt: skip
        lines += ["garbage", lines[0][:70]]
        data = log(lines)
        (root / f"{n:02}.log{'.gz' if n % 3 == 0 else ''}").write_bytes(
            gzip.compress(data) if n % 3 == 0 else data
        )
    records = [cloudtrail_record("lake", keys[i % 4], T0 + i * 1000, ANALYST) for i in range(30)]
    (root / "trail.json.gz").write_bytes(cloudtrail_file(records))
    broken = gzip.compress(log([access_line("lake", "t/x", T0)] * 300))
    (root / "zz-broken.log.gz").write_bytes(broken[: len(broken) // 2])


def test_spark_tallies_equal_the_one_machine_harvest_exactly(
    store: GraphStore, tmp_path: Path, spark: Any, moto: BaseClient, moto_endpoint: str
) -> None:
    logs = tmp_path / "logs"
    _awkward_logs(logs)
    settings = s3_settings(moto_endpoint)
    with open_store(GraphSettings(data_dir=tmp_path / "here")) as here:
        run, plain = harvest_s3_access(here, settings, str(logs))
        expected = readers(here)
    assert run.status == "partial" and len(plain.failed_files) == 1 and plain.reads > 300

    run, tallied = harvest_s3_access(store, settings, str(logs), spark=spark)
    assert run.status == "partial"
    assert readers(store) == expected
    assert (tallied.reads, tallied.read_files, tallied.failed_files) == (
        plain.reads, plain.read_files, plain.failed_files)  # fmt: skip
    assert tallied.problems.skipped == plain.problems.skipped == 24
    assert sorted(tallied.problems.named) == sorted(plain.problems.named)

    _, again = harvest_s3_access(store, settings, str(logs), spark=spark, full=True)
    assert (again.counted_before, again.read_files) == (13, 0)  # the broken file is tried again
    assert readers(store) == expected

    bucket = new_bucket(moto, "logs")  # the same files on S3, read by the tasks' own clients
    for path in logs.iterdir():
        if "broken" not in path.name:
            moto.put_object(Bucket=bucket, Key=f"in/{path.name}", Body=path.read_bytes())
    with open_store(GraphSettings(data_dir=tmp_path / "s3")) as other:
        run, _ = harvest_s3_access(other, settings, f"s3://{bucket}/in/", spark=spark)
        assert run.status == "success" and readers(other) == expected


def test_worker_processes_tally_exactly_as_one_process(
    store: GraphStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Runs of files tallied in two processes and added up: the same counts, the same bad
    lines in the same order, the same unreadable file, whether this process adds up many runs
    into a batch or writes each run as its own batches; a rerun reads none of the counted
    files again and the broken one again."""
    logs = tmp_path / "logs"
    _awkward_logs(logs)
    settings = Settings()
    with open_store(GraphSettings(data_dir=tmp_path / "here")) as here:
        run, plain = harvest_s3_access(here, settings, str(logs))
        expected = readers(here)
    assert run.status == "partial" and len(plain.failed_files) == 1 and plain.reads > 300

    run, split = harvest_s3_access(store, settings, str(logs), workers=2)
    assert run.status == "partial" and run.watermark is None
    assert readers(store) == expected
    assert (split.reads, split.read_files, split.failed_files) == (
        plain.reads, plain.read_files, plain.failed_files)  # fmt: skip
    assert split.problems == plain.problems and plain.problems.skipped == 24

    monkeypatch.setattr(access_tally, "BATCH_PAIRS", 3)  # this process's batches: one per run
    with open_store(GraphSettings(data_dir=tmp_path / "small")) as small:
        _, cut = harvest_s3_access(small, settings, str(logs), workers=2)
        assert readers(small) == expected and cut.problems == plain.problems

    _, again = harvest_s3_access(store, settings, str(logs), full=True, workers=3)
    assert (again.counted_before, again.read_files, len(again.failed_files)) == (13, 0, 1)
    assert readers(store) == expected


def test_the_command_takes_workers_but_not_with_spark(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    for name in ("a.log", "b.log", "c.log"):
        (logs / name).write_bytes(log([access_line("lake", "t/a", T0), "garbage line"]))
    args = ["--data-dir", str(tmp_path / "g"), "harvest", "s3-access", str(logs)]
    result = CliRunner().invoke(cli, [*args, "--workers", "2"])
    assert result.exit_code == 0, result.output
    assert f"warning: {logs / 'c.log'}:2: not an S3 server access log line" in result.output
    assert "3 log files read (0 counted before), 3 reads by 1 readers" in result.output
    result = CliRunner().invoke(cli, [*args, "--workers", "2", "--spark", "local[1]"])
    assert result.exit_code == 2 and "--workers is for a run without --spark" in result.output


def test_a_file_without_reads_is_marked_counted_too(store: GraphStore, tmp_path: Path) -> None:
    (tmp_path / "aws.log").write_text(AWS_EXAMPLE)  # bucket operations and a PUT only
    _, first = harvest_s3_access(store, Settings(), str(tmp_path))
    _, again = harvest_s3_access(store, Settings(), str(tmp_path), full=True)
    assert (first.read_files, first.reads, again.counted_before, again.read_files) == (1, 0, 1, 0)
    assert readers(store) == {}
