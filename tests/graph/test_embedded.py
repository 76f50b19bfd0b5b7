"""The embedded server's life: start on demand, share, persist, and never be left behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lineagegraph.errors import StoreError
from lineagegraph.graph.embedded import DB_FILE, STATE_FILE, _pid_alive
from lineagegraph.graph.store import open_store
from lineagegraph.settings import GraphSettings


def server_pid(data_dir: Path) -> int:
    return int(json.loads((data_dir / STATE_FILE).read_text())["pid"])


def wait_dead(pid: int, seconds: float = 10) -> bool:
    deadline = time.monotonic() + seconds
    while _pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not _pid_alive(pid)


def test_data_survives_a_restart(tmp_path: Path) -> None:
    with open_store(GraphSettings(data_dir=tmp_path)) as store:
        store.execute("CREATE (:Asset {urn: 'kept'})", write=True)
        pid = server_pid(tmp_path)
    assert wait_dead(pid), "the last user must stop the server"
    assert not (tmp_path / STATE_FILE).exists()
    with open_store(GraphSettings(data_dir=tmp_path)) as store:
        assert store.execute("MATCH (n:Asset) RETURN n.urn", write=False).rows == [["kept"]]


def test_reopening_a_large_graph_waits_while_the_server_loads_it(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # Big enough that the server still answers LOADING to the first ping after a restart.
    with open_store(GraphSettings(data_dir=tmp_path)) as store:
        store.execute(
            "UNWIND range(1, 1000000) AS i CREATE (:Big {i: i, s: 'payload'})", write=True
        )
    with (
        caplog.at_level("INFO", logger="lineagegraph.graph.embedded"),
        open_store(GraphSettings(data_dir=tmp_path)) as store,
    ):
        assert store.execute("MATCH (n:Big) RETURN count(n)", write=False).rows == [[1000000]]
    assert "loading the embedded store" in caplog.text


def test_a_session_that_wrote_nothing_leaves_the_file_alone(tmp_path: Path) -> None:
    with open_store(GraphSettings(data_dir=tmp_path)) as store:
        store.execute("CREATE (:Asset {urn: 'kept'})", write=True)
    rdb = tmp_path / DB_FILE
    written = rdb.stat().st_mtime_ns
    with open_store(GraphSettings(data_dir=tmp_path)) as store:
        store.execute("MATCH (n) RETURN count(n)", write=False)
    assert rdb.stat().st_mtime_ns == written  # a read-only session: no save on stop
    with open_store(GraphSettings(data_dir=tmp_path)) as store:
        store.execute("CREATE (:Asset {urn: 'new'})", write=True)
    assert rdb.stat().st_mtime_ns > written
    with open_store(GraphSettings(data_dir=tmp_path)) as store:
        got = store.execute("MATCH (n:Asset) RETURN n.urn ORDER BY n.urn", write=False).rows
    assert got == [["kept"], ["new"]]


def test_two_users_share_one_server_and_the_last_stops_it(tmp_path: Path) -> None:
    first = open_store(GraphSettings(data_dir=tmp_path))
    second = open_store(GraphSettings(data_dir=tmp_path))
    pid = server_pid(tmp_path)
    second.execute("CREATE (:Asset {urn: 'from-second'})", write=True)
    assert first.execute("MATCH (n) RETURN count(n)", write=False).rows == [[1]]
    first.close()
    assert _pid_alive(pid), "the server must stay up while another user holds it"
    assert second.execute("MATCH (n) RETURN count(n)", write=False).rows == [[1]]
    second.close()
    assert wait_dead(pid)


def test_a_killed_users_server_is_reused_then_stopped(tmp_path: Path) -> None:
    code = (
        "import sys, time\n"
        "from pathlib import Path\n"
        "from lineagegraph.graph.store import open_store\n"
        "from lineagegraph.settings import GraphSettings\n"
        "s = open_store(GraphSettings(data_dir=Path(sys.argv[1])))\n"
        "s.execute(\"CREATE (:Asset {urn: 'before-kill'})\", write=True)\n"
        "print('ready', flush=True)\n"
        "time.sleep(60)\n"
    )
    child = subprocess.Popen([sys.executable, "-c", code, str(tmp_path)], stdout=subprocess.PIPE)
    assert child.stdout is not None and child.stdout.readline().strip() == b"ready"
    orphan = server_pid(tmp_path)
    child.send_signal(signal.SIGKILL)
    child.wait()
    assert _pid_alive(orphan), "a killed CLI leaves its server behind"
    with open_store(GraphSettings(data_dir=tmp_path)) as store:
        assert server_pid(tmp_path) == orphan, "the next run must reuse it"
        assert store.execute("MATCH (n) RETURN n.urn", write=False).rows == [["before-kill"]]
    assert wait_dead(orphan), "and stop it when done"


def test_a_stale_state_file_is_ignored(tmp_path: Path) -> None:
    (tmp_path / STATE_FILE).write_text(json.dumps({"pid": 999_999, "port": 1}))
    with open_store(GraphSettings(data_dir=tmp_path)) as store:
        assert server_pid(tmp_path) != 999_999
        assert store.execute("RETURN 1", write=False).rows == [[1]]


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
