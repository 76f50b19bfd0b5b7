"""Who runs a harvest and whether that process still lives, with the clock runs are timed by.

Below the harvest loop (lineagegraph.pipeline), which records them on each :HarvestRun, and
`lineagegraph status`, which reads them back to tell a dead `running` run from a live one.
"""

from __future__ import annotations

import os
import socket
import time
from pathlib import Path
from typing import Any

HOST = socket.gethostname()


def now_ms() -> int:
    return int(time.time() * 1000)


def process_start(pid: int) -> int | None:
    """When a process started (clock ticks since boot, /proc/PID/stat field 22), None if gone.

    Together with the pid it names one process even after its pid is reused.
    """
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may hold spaces: split after it.
    return int(stat.rpartition(")")[2].split()[19])


PID = os.getpid()
PID_START = process_start(PID)


def is_abandoned(run: dict[str, Any]) -> bool:
    """A `running` run of this host whose process no longer lives (killed, machine rebooted)."""
    if run.get("status") != "running" or run.get("host") != HOST or run.get("pid") is None:
        return False
    return process_start(int(run["pid"])) != run.get("pid_start")
