"""The spool between an acknowledged event and the graph: appends from many threads, rotation,
what a killed process leaves behind, and an ingest that fails keeping its files."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
from pathlib import Path

from lineagegraph.serve.spool import GroupCommit, Ingester, Spool


def lines_in(directory: Path) -> list[str]:
    return [line for p in sorted(directory.glob("*.jsonl")) for line in p.read_text().splitlines()]


def test_concurrent_appends_all_land_whole_and_in_segments(tmp_path: Path) -> None:
    spool = Spool(tmp_path)

    def write(worker: int) -> None:
        for n in range(200):
            spool.append(f'{{"w":{worker},"n":{n}}}\n'.encode(), 1)
            if n % 50 == 0:
                spool.rotate()

    threads = [threading.Thread(target=write, args=(w,)) for w in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    spool.close()
    written = lines_in(spool.ingesting) + lines_in(spool.incoming)
    assert sorted(written) == sorted(f'{{"w":{w},"n":{n}}}' for w in range(4) for n in range(200))
    assert len(list(spool.ingesting.iterdir())) > 1
    assert {oct(p.stat().st_mode & 0o777) for p in spool.ingesting.iterdir()} == {"0o600"}


def test_group_commit_answers_each_append_once_its_line_is_written(tmp_path: Path) -> None:
    spool = Spool(tmp_path)
    commit = GroupCommit(spool)
    seen_on_return: list[bool] = []

    async def append(n: int) -> None:
        line = f'{{"n":{n}}}'
        await commit.append(line.encode() + b"\n", 1)
        seen_on_return.append(line in lines_in(spool.incoming))

    async def many() -> None:
        await asyncio.gather(*(append(n) for n in range(300)))

    asyncio.run(many())
    assert seen_on_return == [True] * 300
    assert spool.pending() == 300
    commit.stop()
    spool.close()
    assert sorted(lines_in(spool.incoming)) == sorted(f'{{"n":{n}}}' for n in range(300))


def test_a_new_process_ingests_what_the_last_one_left(tmp_path: Path) -> None:
    first = Spool(tmp_path)
    first.append(b'{"a":1}\n', 1)
    first.rotate()  # handed to ingestion ...
    first.append(b'{"a":2}\n', 1)  # ... and still open, when the process "dies" (no close)
    seen: list[list[str]] = []

    def ingest(directory: Path) -> int:
        seen.append(lines_in(directory))
        return len(seen[-1])

    second = Spool(tmp_path)
    ingester = Ingester(second, ingest, every_seconds=60, batch_events=10)
    ingester.start()
    second.append(b'{"a":3}\n', 1)
    ingester.stop()
    second.close()
    assert sorted(line for batch in seen for line in batch) == ['{"a":1}', '{"a":2}', '{"a":3}']
    assert ingester.ingested == 3
    assert not list(second.ingesting.iterdir()) and not list(second.incoming.iterdir())


def test_a_failed_ingest_keeps_its_files_for_the_next_round(tmp_path: Path) -> None:
    spool = Spool(tmp_path)
    spool.append(b'{"a":1}\n', 1)
    calls: list[int] = []

    def ingest(directory: Path) -> int:
        calls.append(1)
        if len(calls) == 1:
            raise ConnectionError("store went away")
        return len(lines_in(directory))

    ingester = Ingester(spool, ingest, every_seconds=60, batch_events=10)
    ingester.drain()
    assert ingester.last_error == "ConnectionError: store went away"
    assert lines_in(spool.ingesting) == ['{"a":1}']
    ingester.drain()
    assert ingester.last_error is None and ingester.ingested == 1
    assert not os.listdir(spool.ingesting)
    spool.close()


FULL_DISK = """
import resource, sys
from pathlib import Path
from lineagegraph.errors import StoreError
from lineagegraph.serve.spool import Spool
spool = Spool(Path(sys.argv[1]))
spool.append(b'{"a":1}\\n', 1)
resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))  # the file may grow to 4 KiB: "full"
try:
    spool.append(b'{"big":"' + b"x" * 10_000 + b'"}\\n', 1)
except StoreError as exc:
    print(exc)
spool.append(b'{"a":2}\\n', 1)
"""


GROUP_ON_A_FULL_DISK = """
import asyncio, resource, sys
from pathlib import Path
from lineagegraph.errors import StoreError
from lineagegraph.serve.spool import GroupCommit, Spool
spool = Spool(Path(sys.argv[1]))
commit = GroupCommit(spool)

async def main():
    await commit.append(b'{"a":1}\\n', 1)
    resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))  # the file may grow to 4 KiB
    big = commit.append(b'{"big":"' + b"x" * 10_000 + b'"}\\n', 1)
    results = await asyncio.gather(big, return_exceptions=True)
    print([type(r).__name__ + ": " + str(r) for r in results])
    await commit.append(b'{"a":2}\\n', 1)

asyncio.run(main())
commit.stop()
"""


def test_a_group_that_cannot_be_written_fails_its_requests_and_the_next_one_works(
    tmp_path: Path,
) -> None:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}
    result = subprocess.run(
        [sys.executable, "-c", GROUP_ON_A_FULL_DISK, str(tmp_path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert "StoreError: cannot write the spool" in result.stdout, result.stdout
    assert lines_in(tmp_path / "incoming") == ['{"a":1}', '{"a":2}']


def test_a_write_that_fails_half_way_leaves_no_half_line(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}
    result = subprocess.run(
        [sys.executable, "-c", FULL_DISK, str(tmp_path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert "cannot write the spool" in result.stdout and "File too large" in result.stdout
    assert lines_in(tmp_path / "incoming") == ['{"a":1}', '{"a":2}']
