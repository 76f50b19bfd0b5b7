"""The one small interface every backend implements (backends import this, never store.py)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from itertools import islice, repeat
from typing import Any, TypeVar

from lineagegraph.graph.statements import statement

T = TypeVar("T")


@dataclass
class Result:
    """Rows of a query as plain Python values (nodes and relationships become dicts)."""

    columns: list[str]
    rows: list[list[Any]] = field(default_factory=list)

    def records(self) -> list[dict[str, Any]]:
        # map, not a comprehension: a report reads hundreds of thousands of rows
        return list(map(dict, map(zip, repeat(self.columns), self.rows)))


class GraphStore(ABC):
    """A graph that runs lineagegraph's named statements and a user's ad-hoc Cypher."""

    backend: str
    batch_size: int
    location: str  # where the graph lives (a data directory or a URI), for messages
    reads_at_once: int = 1  # reads the store serves in parallel (see read_each)

    @abstractmethod
    def execute(self, text: str, params: dict[str, Any] | None = None, *, write: bool) -> Result:
        """Run one statement in its own transaction; a failed write changes nothing."""

    @abstractmethod
    def init_schema(self) -> None:
        """Create the constraints and indexes (idempotent)."""

    def ensure_schema(self) -> None:
        """Make sure the schema is in place; a backend that can tell it already is (in one
        read) skips init_schema's writes."""
        self.init_schema()

    def upgrade_pending(self) -> str | None:
        """What to run when this store was written by an older version and init_schema has not
        brought it up to date yet (then `diff` misses its older changes), else None. The
        embedded store brings itself up to date when it opens."""
        return None

    @abstractmethod
    def close(self) -> None: ...

    def alive(self) -> bool:
        """Whether the store answers now (one cheap round trip): a long-running user such as
        `serve` tells an unreachable store from one that refused a statement by it."""
        return True

    def run(self, name: str, params: dict[str, Any] | None = None, *, write: bool = True) -> Result:
        """Run the named statement from cypher/."""
        return self.execute(statement(name), params, write=write)

    def read(
        self, name: str, params: dict[str, Any] | None = None, *, plain: bool = False
    ) -> list[dict[str, Any]]:
        """Run a named read statement and return its records.

        `plain`: the statement returns only strings, integers and nulls (no booleans, floats,
        lists, maps or entities), which a backend may then read without each value's type
        (the embedded store does: several times less work for a large reply). Any other value
        would come back as text, so only statements written for it say so.
        """
        return self.run(name, params, write=False).records()

    def read_rows(
        self,
        name: str,
        params: dict[str, Any] | None = None,
        *,
        plain: bool = False,
        numbers: bool = False,
    ) -> list[list[Any]]:
        """`read`'s rows as lists in the statement's column order, for replies of hundreds of
        thousands of rows, where a dict per row costs the client more than the server's work.
        `numbers`: the statement returns only integers and nulls (internal ids), which a
        backend may then hand over without looking at each value. `plain` as for `read`."""
        return self.run(name, params, write=False).rows

    def read_each(
        self, name: str, params: Sequence[dict[str, Any]], *, plain: bool = False
    ) -> list[list[dict[str, Any]]]:
        """Run a named read statement once per set of parameters, `reads_at_once` at a time on
        as many connections (the server's other cores work too); the records in params' order.
        `plain` as for `read`."""
        workers = min(self.reads_at_once, len(params))
        if workers < 2:
            return [self.read(name, p, plain=plain) for p in params]
        with ThreadPoolExecutor(workers, thread_name_prefix="graph-read") as pool:
            return list(pool.map(lambda p: self.read(name, p, plain=plain), params))

    def write_batches(
        self, name: str, rows: Iterable[dict[str, Any]], key: tuple[str, ...] = ()
    ) -> int:
        """Run the named `UNWIND $rows` statement over `rows` in chunks; returns rows written
        (a statement that ends in `RETURN count(*) AS written` says how many; see `written`).

        Each chunk is one transaction: a failing chunk leaves the graph as it was before it.
        `key` names the fields a statement MERGEs on: rows repeating a key within a chunk go to
        later rounds, because FalkorDB 4.16 crashes or loses updates when one statement MERGEs
        the same key twice (see test_repeated_keys_in_one_batch), and rounds keep Neo4j's
        row-by-row meaning on both backends.
        """
        parts = (
            part
            for chunk in chunks(rows, self.batch_size)
            for part in (distinct_rounds(chunk, key) if key else [chunk])
        )
        return self.write_parts(statement(name), parts)

    def write_parts(self, text: str, parts: Iterable[list[dict[str, Any]]]) -> int:
        """Run `text` once per part of rows, in order; a backend may overlap the work."""
        return sum(written(self.execute(text, {"rows": part}, write=True), part) for part in parts)

    def __enter__(self) -> GraphStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def written(result: Result, part: list[dict[str, Any]]) -> int:
    """Rows of `part` a write statement wrote: its `written` column when it MATCHes what it
    needs first (a row whose endpoint is missing is left out), else every row it was sent."""
    if result.columns == ["written"] and result.rows:
        return int(result.rows[0][0])
    return len(part)


def chunks(rows: Iterable[T], size: int) -> Iterator[list[T]]:
    it = iter(rows)
    while chunk := list(islice(it, size)):
        yield chunk


def distinct_rounds(rows: list[dict[str, Any]], key: tuple[str, ...]) -> list[list[dict[str, Any]]]:
    """Split rows, in order, into rounds in which each key occurs at most once."""
    rounds: list[list[dict[str, Any]]] = []
    seen: dict[tuple[Any, ...], int] = {}
    for row in rows:
        k = tuple(row[f] for f in key)
        n = seen.get(k, 0)
        seen[k] = n + 1
        if n == len(rounds):
            rounds.append([])
        rounds[n].append(row)
    return rounds
