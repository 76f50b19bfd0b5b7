"""A damaged store stops every command (exit 3) and keeps its files; doctor says and repairs.
A data directory of another user, or with links among its files, is refused."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from lineagegraph.cli import cli

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from test_runs import write_events

MANIFEST = "appendonlydir/appendonly.aof.manifest"
COUNT = "MATCH (n) RETURN count(n)"
NODE_FACTS = "MATCH (n) RETURN toInteger(count(n) + sum(size(keys(n))))"
EDGE_FACTS = "MATCH ()-[r]->() RETURN toInteger(count(r) + sum(size(keys(r))))"


def run(data_dir: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["--data-dir", str(data_dir), *args])
    return result.exit_code, result.output


def count(data_dir: Path, query: str = COUNT) -> int:
    code, out = run(data_dir, "query", query, "--format", "csv")
    assert code == 0, out
    return int(out.split()[-1])


def entries(data_dir: Path) -> int:
    """Nodes, relationships and their properties: a repair that cuts a log's tail loses some
    of them (the tail may hold only the properties a harvest's history writes last)."""
    return count(data_dir, NODE_FACTS) + count(data_dir, EDGE_FACTS)


@pytest.fixture(scope="module")
def harvested(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real store, built by a harvest: 2,000 jobs and their 2,000 runs, 4,000 datasets."""
    base = tmp_path_factory.mktemp("harvested")
    write_events(base / "events", files=20, per_file=100)
    code, out = run(base / "store", "harvest", "openlineage", str(base / "events"))
    assert code == 0, out
    return base / "store"


def incr_file(data_dir: Path) -> Path:
    line = next(
        x
        for x in (data_dir / MANIFEST).read_text().splitlines()
        if x.endswith(" i") or " type i" in x
    )
    return data_dir / "appendonlydir" / line.split()[1]


def cut(path: Path) -> None:
    os.truncate(path, path.stat().st_size // 2)


def empty(path: Path) -> None:
    os.truncate(path, 0)


def garbage(path: Path) -> None:
    with open(path, "r+b") as f:
        f.seek(path.stat().st_size // 2)
        f.write(b"\x07" * 4096)


DAMAGE = {"cut": cut, "emptied": empty, "garbage": garbage}


def files_of(data_dir: Path) -> dict[str, bytes]:
    aof = data_dir / "appendonlydir"
    return {p.name: p.read_bytes() for p in sorted(aof.iterdir())}


@pytest.mark.parametrize("damage", [*DAMAGE, "no manifest"])
def test_a_damaged_store_stops_every_command_and_keeps_its_files(
    harvested: Path, tmp_path: Path, damage: str
) -> None:
    whole = count(harvested)
    assert whole == 8001
    data_dir = tmp_path / "store"
    shutil.copytree(harvested, data_dir)
    damaged = incr_file(data_dir)
    if damage == "no manifest":
        (data_dir / MANIFEST).unlink()
        named = "appendonly.aof.manifest is missing"
    else:
        DAMAGE[damage](damaged)
        named = damaged.name
    before = files_of(data_dir)
    for command in (["status"], ["query", COUNT], ["init"]):
        code, out = run(data_dir, *command)
        assert code == 3, (command, out)
        assert "is damaged" in out and named in out and "lineagegraph doctor" in out, out
        assert files_of(data_dir) == before, "the evidence is kept as it was"
    code, out = run(data_dir, "doctor")
    assert code == 3 and named in out and "--repair:" in out, out
    assert files_of(data_dir) == before
    code, out = run(data_dir, "doctor", "--repair")
    assert code == 0, out
    copy = Path(out.split("kept in ")[1].strip())
    assert files_of(copy) == before, "the repair keeps a copy of the damaged files"
    recovered, written = entries(data_dir), entries(harvested)
    assert recovered == written if damage == "no manifest" else recovered < written
    assert run(data_dir, "doctor")[0] == 0


def test_a_half_written_last_entry_is_a_crash_and_needs_no_recovery(
    harvested: Path, tmp_path: Path
) -> None:
    """What a kill -9 mid-write leaves (an unacknowledged entry cut short) opens whole, with no
    doctor; a cut within what the last clean stop recorded is refused (the test above)."""
    data_dir = tmp_path / "store"
    shutil.copytree(harvested, data_dir)
    with open(incr_file(data_dir), "ab") as f:
        f.write(b"*3\r\n$11\r\nGRAPH.QUERY\r\n$7\r\nlin")
    code, out = run(data_dir, "status")
    assert code == 0, out
    assert count(data_dir) == 8001


needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to chown to uid 65534")


@needs_root
def test_a_data_dir_of_another_user_is_refused_and_its_links_not_followed(tmp_path: Path) -> None:
    """World-writable, owned by nobody, server.pid and falkordb.log linked to root's files."""
    victim_pid, victim_log = tmp_path / "root-only-a", tmp_path / "root-only-b"
    for victim in (victim_pid, victim_log):
        victim.write_text("root's\n")
        victim.chmod(0o600)
    data_dir = tmp_path / "theirs"
    data_dir.mkdir()
    data_dir.chmod(0o777)
    os.symlink(victim_pid, data_dir / "server.pid")
    os.symlink(victim_log, data_dir / "falkordb.log")
    os.chown(data_dir, 65534, 65534)
    events = tmp_path / "events"
    write_events(events, files=1, per_file=5)
    code, out = run(data_dir, "harvest", "openlineage", str(events))
    assert code == 3, out
    assert "belongs to uid 65534" in out and str(data_dir) in out, out
    assert victim_pid.read_text() == victim_log.read_text() == "root's\n"
    assert sorted(p.name for p in data_dir.iterdir()) == ["falkordb.log", "server.pid"]


def test_a_group_writable_data_dir_is_refused(tmp_path: Path) -> None:
    data_dir = tmp_path / "shared"
    data_dir.mkdir()
    data_dir.chmod(0o775)
    code, out = run(data_dir, "init")
    assert code == 3 and "may be written by others" in out and "chmod 700" in out, out
    assert list(data_dir.iterdir()) == []


@pytest.mark.parametrize("name", ["falkordb.log", "server.pid", "store.lock", "harvest.lock"])
def test_a_link_among_the_store_files_is_refused_not_followed(tmp_path: Path, name: str) -> None:
    victim = tmp_path / "root-only"
    victim.write_text("root's\n")
    victim.chmod(0o600)
    data_dir = tmp_path / "store"
    data_dir.mkdir(mode=0o700)
    os.symlink(victim, data_dir / name)
    events = tmp_path / "events"
    write_events(events, files=1, per_file=5)
    code, out = run(data_dir, "harvest", "openlineage", str(events))
    assert code == 3, out
    assert "symbolic link" in out and name in out, out
    assert victim.read_text() == "root's\n"
    assert victim.stat().st_mode & 0o777 == 0o600


def test_the_harvest_lock_is_owner_only_whatever_the_umask(tmp_path: Path) -> None:
    events = tmp_path / "events"
    write_events(events, files=1, per_file=5)
    old = os.umask(0)
    try:
        code, out = run(tmp_path / "store", "harvest", "openlineage", str(events))
    finally:
        os.umask(old)
    assert code == 0, out
    assert (tmp_path / "store" / "harvest.lock").stat().st_mode & 0o777 == 0o600
