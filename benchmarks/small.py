"""`--small`, shared by every benchmark: the same run at tiny sizes, so CI keeps it working.

Full sizes take minutes to hours and are for people measuring; `--small` takes seconds and only
shows that the script still runs end to end and prints its figures (tests/test_benchmarks.py).
Its numbers say nothing about performance.
"""

from __future__ import annotations

import argparse
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
