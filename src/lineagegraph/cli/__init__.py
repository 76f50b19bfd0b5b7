"""The `lineagegraph` command: thin click commands that open the store, call one function, print.

Each command group lives in its own module; importing it registers its commands.
"""

import signal
from types import FrameType

from lineagegraph.cli import (  # noqa: F401  (imported to register their commands)
    alerts,  # alerts
    core,  # init, status, query
    dbt,  # harvest dbt
    demo,  # demo
    harvesting,  # harvest list, harvest all, harvest NAME of a plug-in
    history,  # diff, history
    kafka,  # harvest kafka
    lineage,  # path, upstream, downstream, impact, columns
    quality,  # check
    reports,  # orphans, cost-report
    s3,  # harvest s3, harvest s3-inventory
    serve,  # serve
    snowflake,  # harvest snowflake
    spark,  # harvest spark, harvest openlineage
    tags,  # tag, untag, tags
)
from lineagegraph.cli.app import cli
from lineagegraph.cli.harvesting import harvest
from lineagegraph.errors import Interrupted

__all__ = ["cli", "harvest", "main"]


STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


def main() -> None:
    for signum in STOP_SIGNALS:
        signal.signal(signum, _stop)
    cli(prog_name="lineagegraph")


def _stop(signum: int, frame: FrameType | None) -> None:
    """Unwind the command (the run is recorded, the store released); ignore repeats meanwhile."""
    for other in STOP_SIGNALS:
        signal.signal(other, signal.SIG_IGN)
    raise Interrupted(signum)
