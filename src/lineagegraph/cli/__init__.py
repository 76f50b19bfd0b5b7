"""The `lineagegraph` command: thin click commands that open the store, call one function, print.

Each command group lives in its own module and is registered here.
"""

import lineagegraph.cli.spark as _spark  # noqa: F401  (registers harvest spark, openlineage)
from lineagegraph.cli import core  # noqa: F401  (registers init, status, query)
from lineagegraph.cli.app import cli, harvest

__all__ = ["cli", "harvest", "main"]


def main() -> None:
    cli(prog_name="lineagegraph")
