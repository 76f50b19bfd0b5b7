"""The embedded backend: FalkorDB, the default when no Neo4j URI is set."""

from __future__ import annotations

import logging
import os
import re
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import redis
from falkordb import Edge, FalkorDB, Graph, Node, Path, QueryResult
from falkordb.graph import QUERY_CMD, RO_QUERY_CMD
from falkordb.helpers import stringify_param_value
from falkordb.query_result import parse_scalar

from lineagegraph import gc_pause
from lineagegraph.errors import WRITE_REFUSED, QueryError, StoreError
from lineagegraph.graph.base import GraphStore, Result, written
from lineagegraph.graph.embedded import EmbeddedServer
from lineagegraph.graph.settings import GraphSettings
from lineagegraph.graph.statements import schema_statements, schema_version, statement
from lineagegraph.graph.text import decode, encode

# The unique constraints older stores have: FalkorDB 4.16 crashes checking one on a value
# with a space at either end or a control character, so init_schema drops them. Keys stay
# unique without them: FalkorDB runs a graph's writes one at a time and every writer MERGEs.
LEGACY_UNIQUE_KEYS = (
    ("Asset", "urn"),
    ("Transformation", "urn"),
    ("Column", "urn"),
    ("HarvestRun", "id"),
)
log = logging.getLogger(__name__)
NEW_GRAPH_ANSWER_S = 30.0
"""A new graph's schema takes milliseconds. FalkorDB 4.16 has, rarely (twice in thousands of new
stores), never answered the first statement of a new graph: its global lock's reader count had
gone below zero. After this long the store kills its server and starts it again, once."""
# Bump when init_schema's own steps change (the schema file's changes are seen by themselves).
# 2: strings in stored form (lineagegraph.graph.text); init_schema re-encodes older stores.
# 3: `changed_at` on nodes and lineage edges (docs/history.md); init_schema sets it on older ones.
SCHEMA_STEPS = 3
ENCODED_SINCE = 2
CHANGED_AT_SINCE = 3
ENCODE_PAGE = 20_000
"""Node ids a step of `_encode_stored_strings` or `_set_changed_at` takes at once."""


class FalkorDBStore(GraphStore):
    backend = "falkordb"

    def __init__(self, settings: GraphSettings, *, appendfsync: str | None = "always") -> None:
        """`appendfsync` is for benchmarks only (see EmbeddedServer): users get "always"."""
        self.batch_size = settings.batch_size
        self.location = str(settings.data_dir)
        self._server = EmbeddedServer(settings.data_dir, appendfsync=appendfsync)
        self._schema_key = f"lineagegraph:schema:{settings.graph_name}"
        try:
            self._connect(self._server.acquire(), settings.graph_name)
            # A new store is ready to use (reads on a missing graph fail); an older one loses
            # the unique constraints that crash the server.
            if self._ensure_schema():
                self._server.rewrite_aof()  # its schema in the snapshot: see rewrite_aof
        except redis.RedisError as exc:
            self._server.release()
            raise StoreError(f"cannot open the embedded store in {self.location}: {exc}") from None
        except StoreError as exc:
            self._server.release()  # idempotent: a failed acquire has let go already
            if _disk_full(str(exc)):
                raise StoreError(self._full(str(exc))) from None
            raise

    def _connect(self, socket_path: str, graph_name: str) -> None:
        self._db = FalkorDB(unix_socket_path=socket_path)
        self._graph = self._db.select_graph(graph_name)
        # The server runs read queries on a pool of this many threads (one per core), and
        # the client's connection pool gives each reading thread its own connection.
        self.reads_at_once = int(self._db.config_get("THREAD_COUNT"))

    def execute(self, text: str, params: dict[str, Any] | None = None, *, write: bool) -> Result:
        """Ad-hoc Cypher too: its string literals are compared with stored forms, so they are
        encoded like parameters (see lineagegraph.graph.text)."""
        query = self._encode(LITERAL.sub(_encode_literal, text), params)
        return self._run(QUERY_CMD if write else RO_QUERY_CMD, query)

    def read(
        self, name: str, params: dict[str, Any] | None = None, *, plain: bool = False
    ) -> list[dict[str, Any]]:
        """`plain`: the server's verbose reply, whose strings, integers and nulls arrive as they
        are; a compact reply wraps each value in a list with its type, which costs the client
        most of its time on a report's large replies (figures: docs/benchmarks.md)."""
        query = self._encode(statement(name), params)
        return self._run(RO_QUERY_CMD, query, compact=not plain).records()

    def read_rows(
        self,
        name: str,
        params: dict[str, Any] | None = None,
        *,
        plain: bool = False,
        numbers: bool = False,
    ) -> list[list[Any]]:
        query = self._encode(statement(name), params)
        compact = not (plain or numbers)
        return self._run(RO_QUERY_CMD, query, compact=compact, raw=numbers).rows

    def write_parts(self, text: str, parts: Iterable[list[dict[str, Any]]]) -> int:
        """Encode the next part while the server runs this one.

        The client turns parameters into Cypher text in Python, about as long as the server
        takes to run a write batch, so a worker thread prepares part N+1 while this thread
        waits on the socket for part N (the wait releases the GIL). Order and one statement
        (one atomic transaction) per part are kept.
        """
        done = 0
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="falkordb-encode") as pool:
            parts = iter(parts)
            first = next(parts, None)
            if first is None:
                return 0
            ahead = pool.submit(self._encode, text, {"rows": first})
            current = first
            for part in parts:
                query = ahead.result()
                ahead = pool.submit(self._encode, text, {"rows": part})
                done += written(self._run(QUERY_CMD, query), current)
                current = part
            return done + written(self._run(QUERY_CMD, ahead.result()), current)

    def _encode(self, text: str, params: dict[str, Any] | None) -> str:
        """The client's own quoting of each parameter (as its query() does), in stored form: a
        quoted value's text is only its strings and Cypher punctuation, which `encode` leaves
        alone, so one pass over it encodes every string in it."""
        if not params:
            return text
        header = " ".join(
            f"`{name}`={encode(stringify_param_value(value))}" for name, value in params.items()
        )
        return f"CYPHER {header} {text}"

    def _run(self, command: str, query: str, *, compact: bool = True, raw: bool = False) -> Result:
        """Send one encoded query and decode its compact reply (see `_result`), or take a
        verbose one's rows with only their strings decoded (see `read`), or not even those
        (`raw`)."""
        try:
            with gc_pause.paused():  # a large reply: see lineagegraph.gc_pause
                mode = ("--compact",) if compact else ()
                reply = self._graph.execute_command(command, self._graph.name, query, *mode)
                if isinstance(reply[-1], redis.ResponseError):  # failed while running
                    raise reply[-1]
                if len(reply) < 3 or not reply[0]:  # statistics only: no rows
                    return Result([])
                if compact:
                    return _result(reply, self._graph)
                columns = [str(name) for name in reply[0]]
                return Result(columns, reply[1] if raw else _decoded_rows(reply[1]))
        except redis.ResponseError as exc:
            message = str(exc)
            if _disk_full(message):
                raise StoreError(self._full(message)) from None
            if "read-only" in message.lower() or "RO_QUERY" in message:
                raise QueryError(WRITE_REFUSED) from None
            raise QueryError(f"the embedded store rejected the query: {message}") from None
        except redis.RedisError as exc:
            # With appendfsync always, a failed append-only write ends the server; its log says
            # why, unless the full disk kept it from writing that too.
            tail = self._server.log_tail()
            if _disk_full(tail) or _no_space(self._server.data_dir):
                raise StoreError(self._full(f"the server stopped: {exc}{tail}")) from None
            raise StoreError(f"lost the embedded store in {self.location}: {exc}") from None

    def _full(self, detail: str) -> str:
        return (
            f"disk full: the embedded store in {self.location} cannot write its files; free "
            f"space on that disk and run the command again (serve retries by itself)\n{detail}"
        )

    def alive(self) -> bool:
        try:
            return bool(self._db.connection.ping())
        except (redis.RedisError, OSError):
            return False

    def ensure_schema(self) -> None:
        self._ensure_schema()

    def _ensure_schema(self) -> bool:
        """init_schema unless the graph exists and its marker (a key beside it) names the
        current schema: two reads, so opening a store never queues a write behind a running
        ingest. Returns whether the graph is new."""
        # EXISTS, a plain key look-up, rather than GRAPH.LIST, which walks FalkorDB's list of
        # graphs under the global lock found miscounted when a new graph hung (see
        # NEW_GRAPH_ANSWER_S); whether GRAPH.LIST had a part in that is not known.
        new = not self._db.connection.exists(self._graph.name)
        marker = self._db.connection.get(self._schema_key)  # text: the client decodes replies
        if new:
            self._watched(self.init_schema)
        elif marker != _current_schema():
            self.init_schema()
        return new

    def _watched(self, step: Callable[[], None]) -> None:
        """Run `step` (a new graph's first statements); if the server has not answered within
        NEW_GRAPH_ANSWER_S, kill it, start it again and run `step` once more."""
        failure: list[BaseException] = []

        def run() -> None:
            try:
                step()
            except BaseException as exc:  # handed to the caller's thread
                failure.append(exc)

        worker = threading.Thread(target=run, name="lineagegraph-new-graph", daemon=True)
        worker.start()
        worker.join(NEW_GRAPH_ANSWER_S)
        if not worker.is_alive():
            if failure:
                raise failure[0]
            return
        log.warning(
            "the embedded server in %s did not answer a new graph's first statement within "
            "%.0f s (a FalkorDB 4.16 fault); restarting it",
            self.location,
            NEW_GRAPH_ANSWER_S,
        )
        self._server.kill()
        worker.join()  # its statement fails now that the server is gone
        self._server.release()
        self._connect(self._server.acquire(), self._graph.name)
        step()

    def init_schema(self) -> None:
        """Create the indexes MERGE looks keys up in; drop an older store's unique constraints;
        then mark the graph as holding the current schema."""
        for text in schema_statements(self.backend):
            try:
                self._graph.query(text)
            except redis.ResponseError as exc:
                if "already indexed" not in str(exc):
                    raise QueryError(f"schema statement failed: {exc}") from None
        marker = self._db.connection.get(self._schema_key)
        step = 0 if marker is None else int(marker.split(":")[0])
        if step < ENCODED_SINCE:  # strings as they were
            self._encode_stored_strings()
        if step < CHANGED_AT_SINCE:
            self._set_changed_at()
        existing = {
            (c["label"], tuple(c["properties"]))
            for c in self._constraints()
            if c["type"] == "UNIQUE" and c["entitytype"] == "NODE"
        }
        for label, prop in LEGACY_UNIQUE_KEYS:
            if (label, (prop,)) in existing:
                self._graph.drop_node_unique_constraint(label, prop)
        self._db.connection.set(self._schema_key, _current_schema())

    def _encode_stored_strings(self) -> None:
        """Rewrite, in stored form, the string properties of a store written before
        ENCODED_SINCE, which holds them as they were. Their raw text is read undecoded and
        written back as a parameter, which `_encode` encodes. Not idempotent (a stored form
        encoded again changes), so each page is one transaction and a key beside the graph
        records the pages done: an interrupted run resumes after them. Nodes that a trimmed or
        split index key had made twice stay two nodes with one urn."""
        [[top]] = self._run(RO_QUERY_CMD, statement("store_node_id_max")).rows
        if top is None:  # a new (or empty) graph: nothing was stored the old way
            return
        for kind in ("nodes", "edges"):
            progress = f"{self._schema_key}:encoded-{kind}-below"
            done = int(self._db.connection.get(progress) or 0)
            for start in range(done, (top or 0) + 1, ENCODE_PAGE):
                page = {"from": start, "to": start + ENCODE_PAGE}
                query = self._encode(statement(f"store_raw_{kind}"), page)
                reply = self._graph.execute_command(
                    RO_QUERY_CMD, self._graph.name, query, "--compact"
                )
                rows = QueryResult(self._graph, reply).result_set  # the client's, not decoded
                changed = [
                    {"node": r[0], "id": r[-2], "props": p}
                    for r in rows
                    if (p := _unencoded(r[-1]))
                ]
                if changed:
                    self.execute(statement(f"store_set_{kind}"), {"rows": changed}, write=True)
                self._db.connection.set(progress, start + ENCODE_PAGE)
                log.info("re-encoded the strings of %s below node id %d", kind, start + ENCODE_PAGE)
        for kind in ("nodes", "edges"):
            self._db.connection.delete(f"{self._schema_key}:encoded-{kind}-below")

    def _set_changed_at(self) -> None:
        """Set `changed_at` on the nodes and lineage edges of a store written before
        CHANGED_AT_SINCE (`diff` finds changes through its index, so one without it would never
        be listed), a page of node ids per transaction. Idempotent: an interrupted run starts
        again from the first page."""
        [[top]] = self._run(RO_QUERY_CMD, statement("store_node_id_max")).rows
        if top is None:  # a new (or empty) graph
            return
        for start in range(0, top + 1, ENCODE_PAGE):
            page = {"from": start, "to": start + ENCODE_PAGE}
            for kind in ("assets", "edges"):
                self._run(QUERY_CMD, self._encode(statement(f"store_changed_at_{kind}"), page))
            log.info("set changed_at below node id %d of %d", start + ENCODE_PAGE, top + 1)

    def _constraints(self) -> list[dict[str, Any]]:
        res = self._graph.ro_query("CALL db.constraints()")
        names = [str(h[1]) for h in res.header]
        return [dict(zip(names, row, strict=True)) for row in res.result_set]

    def close(self) -> None:
        self._server.release()


# What the server says (a reply, or its log before it exits) when its disk is full.
DISK_FULL_SIGNS = ("No space left on device", "MISCONF", "Disk quota exceeded")
NO_SPACE_BYTES = 64 * 1024


def _disk_full(text: str) -> bool:
    return any(sign in text for sign in DISK_FULL_SIGNS)


def _no_space(directory: Any) -> bool:
    """Whether the disk of `directory` has (next to) no space left for an unprivileged
    writer: a server that vanished then is one whose write failed."""
    try:
        disk = os.statvfs(directory)
    except OSError:
        return False
    return disk.f_bavail * disk.f_frsize < NO_SPACE_BYTES


def _current_schema() -> str:
    return f"{SCHEMA_STEPS}:{schema_version(FalkorDBStore.backend)}"


# String literals (to encode), and backtick names and comments (left alone), of ad-hoc Cypher.
LITERAL = re.compile(r"""'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|`[^`]*`|//[^\n]*|/\*.*?\*/""", re.S)


def _encode_literal(match: re.Match[str]) -> str:
    token = match[0]
    return encode(token) if token[0] in "'\"" else token


def _unencoded(props: dict[str, Any]) -> dict[str, Any]:
    """The properties whose strings are not in stored form yet."""
    return {k: v for k, v in props.items() if _raw_text(v)}


def _raw_text(value: Any) -> bool:
    if isinstance(value, str):
        return encode(value) != value
    return isinstance(value, list) and any(map(_raw_text, value))


def _decoded_rows(rows: list[list[Any]]) -> list[list[Any]]:
    """A verbose reply's rows with stored forms decoded; every string that needs it is not
    printable (see lineagegraph.graph.text), so the common case is one check per string."""
    return [
        [v if v.__class__ is not str or v.isprintable() else decode(v) for v in row] for row in rows
    ]


# The types of a compact reply's values (falkordb.query_result.ResultSetScalarTypes) that
# _result decodes itself; the client's parser decodes the others.
NULL, STRING, INTEGER, BOOLEAN, DOUBLE, ARRAY, MAP = 1, 2, 3, 4, 5, 6, 10
AS_SENT = frozenset((NULL, INTEGER))
"""Types whose value arrives decoded: None, int (strings arrive as str in stored form)."""


def _result(reply: list[Any], graph: Graph) -> Result:
    """Rows of a compact reply (header, rows, statistics) as `_plain` values: each value comes
    as [type, value]."""
    columns = [str(name) for _, name in reply[0]]
    return Result(
        columns,
        [
            [
                v
                if t in AS_SENT
                else (v if v.isprintable() else decode(v))
                if t == STRING
                else _value(t, v, graph)
                for t, v in row
            ]
            for row in reply[1]
        ],
    )


def _value(kind: int, raw: Any, graph: Graph) -> Any:
    """One value as `_plain(parse_scalar(...))` gives it, without the parser's generic pass
    for the scalar types a report's rows are made of."""
    if kind in AS_SENT:
        return raw
    if kind == STRING:
        return raw if raw.isprintable() else decode(raw)
    if kind == BOOLEAN:
        return raw == "true"
    if kind == DOUBLE:
        return float(raw)
    if kind == ARRAY:
        return [_value(t, v, graph) for t, v in raw]
    if kind == MAP:
        return {str(k): _value(c[0], c[1], graph) for k, c in zip(raw[::2], raw[1::2], strict=True)}
    return _plain(parse_scalar([kind, raw], graph))


def _plain(value: Any) -> Any:
    """Nodes, relationships and paths as JSON-friendly values, the same shape as on Neo4j."""
    if isinstance(value, Node):
        return {"_labels": sorted(value.labels or []), **_plain(value.properties or {})}
    if isinstance(value, Edge):
        return {"_type": value.relation, **_plain(value.properties or {})}
    if isinstance(value, Path):
        items: list[Any] = []
        for i, node in enumerate(value.nodes()):
            if i:
                items.append(_plain(value.get_edge(i - 1)))
            items.append(_plain(node))
        return items
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, str) and not value.isprintable():
        return decode(value)
    return value
