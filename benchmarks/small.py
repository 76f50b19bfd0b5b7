"""`--small`, shared by every benchmark: the same run at tiny sizes, so CI keeps it working.

Full sizes take minutes to hours and are for people measuring; `--small` takes seconds and only
shows that the script still runs end to end and prints its figures (tests/test_benchmarks.py).
Its numbers say nothing about performance.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any


def parse_args(parser: argparse.ArgumentParser, **small: Any) -> argparse.Namespace:
    """Parse the command line; with `--small`, `small` replaces the defaults (explicit options
    still win)."""
    parser.add_argument(
        "--small", action="store_true", help="tiny sizes, seconds long (CI; figures meaningless)"
    )
    args = parser.parse_args()
    if args.small:
        parser.set_defaults(**small)
        args = parser.parse_args()
    return args


def server_pid(data_dir: Path) -> int:
    """The pid of the embedded redis-server serving `data_dir` (it runs with it as its cwd)."""
    for proc in Path("/proc").iterdir():
        try:
            if (
                proc.name.isdigit()
                and Path(os.readlink(proc / "cwd")) == data_dir.resolve()
                and b"redis-server" in (proc / "cmdline").read_bytes()
            ):
                return int(proc.name)
        except OSError:
            continue
    raise LookupError(f"no embedded server runs in {data_dir}")
