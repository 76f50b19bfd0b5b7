"""The `lineagegraph` command: thin click commands that open the store, call one function, print.

Each command group lives in its own module; importing it registers its commands.
"""

from lineagegraph.cli import (  # noqa: F401  (imported to register their commands)
    core,  # init, status, query
    demo,  # demo
    harvest_all,  # harvest all
    lineage,  # path, upstream, downstream, impact, columns
    reports,  # orphans, cost-report
    s3,  # harvest s3, harvest s3-inventory
    snowflake,  # harvest snowflake
    spark,  # harvest spark, harvest openlineage
)
from lineagegraph.cli.app import cli, harvest

__all__ = ["cli", "harvest", "main"]


def main() -> None:
    cli(prog_name="lineagegraph")
