"""One exception hierarchy; the CLI maps each class to a message and an exit code."""


class LineageGraphError(Exception):
    """An error the user can act on: the message says what went wrong and how to fix it."""

    exit_code = 1


class ConfigError(LineageGraphError):
    """Settings are missing or invalid."""

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
