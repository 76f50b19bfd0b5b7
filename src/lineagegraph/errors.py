"""One exception hierarchy; the CLI maps each class to a message and an exit code."""

import signal


class LineageGraphError(Exception):
    """An error the user can act on: the message says what went wrong and how to fix it."""

    exit_code = 1


class ConfigError(LineageGraphError):
    """Settings are missing or invalid."""

    exit_code = 2


class UsageError(LineageGraphError):
    """What was asked cannot be answered as typed (a column without `#COLUMN`, a depth out of
    range, FROM and TO the same): exit 2, like a mistyped option, never 1 (a bug)."""

    exit_code = 2


class StoreError(LineageGraphError):
    """The graph store cannot be reached, opened or written."""

    exit_code = 3


WRITE_REFUSED = "this query writes to the graph; pass --write to allow it"


class QueryError(LineageGraphError):
    """A Cypher query was rejected (invalid, or a write without --write)."""

    exit_code = 4


class HarvestError(LineageGraphError):
    """A harvest could not complete; what was written so far stays consistent."""

    exit_code = 5


class NotFound(LineageGraphError):
    """The asset or column named is not in the graph (a mistyped name, or a soft-deleted asset
    without --include-deleted); the message lists the closest names."""

    exit_code = 7


class Interrupted(BaseException):
    """A signal (SIGTERM, SIGINT, SIGHUP) asked the process to stop.

    A BaseException so that no `except Exception` on the way swallows it; the harvest records
    its run as interrupted and the CLI exits 128 + the signal number, as shells do.
    """

    def __init__(self, signum: int) -> None:
        self.signum = signum
        super().__init__(f"interrupted by {signal.Signals(signum).name}")


class ChecksFailed(LineageGraphError):
    """`lineagegraph check`: the asset or something upstream of it has a failing check."""

    exit_code = 6


class PolicyViolated(LineageGraphError):
    """`lineagegraph check --policy`: a classification reached a place a [[tags.policies]]
    entry forbids; the output lists each violation with the path that carried it there."""

    exit_code = 8


class AlertsFiring(LineageGraphError):
    """`lineagegraph alerts --fail-on SEVERITY`: an alert of that severity or worse fires."""

    exit_code = 9
