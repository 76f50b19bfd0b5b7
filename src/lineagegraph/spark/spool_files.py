"""The agent's local files: its spool of actions waiting for the graph, and the OpenLineage
JSON lines it writes or keeps unsent (`Unsent`, for the HTTP and Kafka senders), each appended
under an exclusive flock.

`lineagegraph harvest spark --spool DIR` (lineagegraph.harvest.spark) replays the spool and
deletes each file under the same lock, so a record is never appended to a file already gone.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from lineagegraph.errors import ConfigError
from lineagegraph.spark.actions import AppInfo
from lineagegraph.spark.threads import Counts

log = logging.getLogger("lineagegraph.spark")

SUFFIX = ".jsonl"
REJECTED_SUFFIX = ".rejected"


def check_writable(directory: Path, what: str) -> Path:
    """Create `directory` and prove it takes a file, at install time rather than mid-job."""
    directory = directory.expanduser()
    try:
        directory.mkdir(parents=True, exist_ok=True)
        probe = directory / f".write-test-{os.getpid()}"
        probe.write_text("ok")
        probe.unlink()
    except OSError as exc:
        raise ConfigError(
            f"the {what} {str(directory)!r} is not writable ({exc.strerror or exc}); "
            f"choose another directory"
        ) from None
    return directory.resolve()


def spool_file_name(app: AppInfo) -> str:
    """One file per application, named so that a person can tell whose it is."""
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{app.name}-{app.app_id}")
    return safe + SUFFIX


def append_lines(path: Path, records: Iterable[dict[str, Any]]) -> None:
    """Append records as JSON lines under an exclusive lock (see the module docstring)."""
    text = "".join(json.dumps(r, separators=(",", ":"), sort_keys=True) + "\n" for r in records)
    while True:
        with open(path, "a", encoding="utf-8") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            if os.fstat(fh.fileno()).st_nlink == 0:
                continue  # replayed and deleted between our open and our lock: reopen
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
            return


class Unsent:
    """Where a sender keeps the events its endpoint did not take, so none is dropped: FILE
    (unreachable: `harvest openlineage` reads it, or send it again) and FILE.rejected (refused
    for a reason retrying will not change), both in the emit=openlineage format."""

    def __init__(
        self, path: Path, counts: Counts, endpoint: str, redact: Callable[[str], str]
    ) -> None:
        self.path = path
        self.rejected_path = path.with_name(path.name + REJECTED_SUFFIX)
        self.counts = counts
        self.endpoint = endpoint  # named in the log: "OpenLineage endpoint URL", "Kafka topic"
        self.redact = redact
        self._logged: set[str] = set()

    def keep(self, event: dict[str, Any], why: str) -> None:
        if self._append(self.path, event):
            self.counts.add("events_unsent")
            log.debug("OpenLineage event kept in %s: %s", self.path, self.redact(why))

    def reject(self, event: dict[str, Any], reason: str) -> None:
        self.counts.add("events_rejected")
        reason = self.redact(reason)
        if reason not in self._logged:  # once per reason: a bad token refuses every event
            self._logged.add(reason)
            log.warning(
                "%s refused an event (%s); refused events are kept in %s",
                self.endpoint,
                reason,
                self.rejected_path,
            )
        self._append(self.rejected_path, event)

    def _append(self, path: Path, event: dict[str, Any]) -> bool:
        """Append to a local file; if even that fails the event is lost: count and say so,
        but never stop the sender (the next event may fare better)."""
        try:
            append_lines(path, [event])
            return True
        except Exception as exc:
            self.counts.add("events_lost")
            log.error("cannot keep an OpenLineage event in %s (%s): it is lost", path, exc)
            return False
