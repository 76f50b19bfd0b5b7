"""The agent's local files: its spool of actions waiting for the graph, and the OpenLineage
JSON lines it writes or keeps unsent, each appended under an exclusive flock.

`lineagegraph harvest spark --spool DIR` (lineagegraph.harvest.spark) replays the spool and
deletes each file under the same lock, so a record is never appended to a file already gone.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from lineagegraph.errors import ConfigError
from lineagegraph.spark.actions import AppInfo

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
