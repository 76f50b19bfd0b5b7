"""The production backend: a Neo4j 5 server through the official driver."""

from __future__ import annotations

from typing import Any

import neo4j
from neo4j import GraphDatabase, graph
from neo4j import exceptions as neo4j_errors

from lineagegraph.errors import WRITE_REFUSED, QueryError, StoreError
from lineagegraph.graph.base import GraphStore, Result
from lineagegraph.graph.settings import GraphSettings
from lineagegraph.graph.statements import schema_statements
from lineagegraph.graph.upgrade import CHANGED_AT_SINCE, read_marker, upgrade
from lineagegraph.settings_base import redact


class Neo4jStore(GraphStore):
    backend = "neo4j"

    def __init__(self, settings: GraphSettings) -> None:
        assert settings.uri, "Neo4jStore needs a URI"
        self.batch_size = settings.batch_size
        self.location = settings.location  # query values masked: it is printed and logged
        self._database = settings.database
        auth = (settings.user, settings.password.get_secret_value()) if settings.password else None
        try:
            self._driver = GraphDatabase.driver(settings.uri, auth=auth)
        except (neo4j_errors.ConfigurationError, ValueError) as exc:
            # The driver's message quotes the whole URI, secrets and all.
            raise StoreError(
                f"Neo4j URI {self.location} is not usable: {redact(_first_line(exc))}"
            ) from None
        try:
            self._driver.verify_connectivity()
        except neo4j_errors.AuthError:
            self._driver.close()
            raise StoreError(
                f"Neo4j at {self.location} rejected the credentials of user {settings.user!r}; "
                "set LINEAGEGRAPH_GRAPH__USER / LINEAGEGRAPH_GRAPH__PASSWORD"
            ) from None
        except (neo4j_errors.ServiceUnavailable, neo4j_errors.DriverError, OSError) as exc:
            self._driver.close()
            raise StoreError(
                f"cannot reach Neo4j at {self.location} ({redact(_first_line(exc))}); is it "
                "running? `docker compose up -d` starts one"
            ) from None
        except neo4j_errors.Neo4jError as exc:
            self._driver.close()
            raise StoreError(
                f"Neo4j at {self.location} refused the connection: {redact(str(exc.message))}"
            ) from None

    def alive(self) -> bool:
        try:
            self._driver.verify_connectivity()
        except (neo4j_errors.Neo4jError, neo4j_errors.DriverError, OSError):
            return False
        return True

    def execute(self, text: str, params: dict[str, Any] | None = None, *, write: bool) -> Result:
        mode = neo4j.WRITE_ACCESS if write else neo4j.READ_ACCESS
        work = _run_write if write else _run_read
        try:
            with self._driver.session(database=self._database, default_access_mode=mode) as session:
                run = session.execute_write if write else session.execute_read
                return run(work, text, params or {})
        except neo4j_errors.ClientError as exc:
            if exc.code and "AccessMode" in exc.code:
                raise QueryError(WRITE_REFUSED) from None
            raise QueryError(f"Neo4j rejected the query: {exc.message}") from None
        except (neo4j_errors.ServiceUnavailable, neo4j_errors.SessionExpired) as exc:
            raise StoreError(f"lost Neo4j at {self.location}: {_first_line(exc)}") from None
        except neo4j_errors.Neo4jError as exc:  # database or transient errors after retries
            raise QueryError(f"Neo4j failed the query: {exc.message}") from None

    def init_schema(self) -> None:
        """Create the constraints and indexes, then run the schema steps an older store has
        not done (lineagegraph.graph.upgrade: its marker node says which)."""
        for text in schema_statements(self.backend):
            self.execute(text, write=True)
        upgrade(self)

    def upgrade_pending(self) -> str | None:
        if read_marker(self).step >= CHANGED_AT_SINCE:
            return None
        return (
            f"`lineagegraph init` of this version has not run on the Neo4j store at "
            f"{self.location}: if an older version wrote to it, `diff` misses the changes it "
            "wrote until `lineagegraph init` (or `lineagegraph serve`) runs once against it"
        )

    def close(self) -> None:
        self._driver.close()


def _run_write(tx: neo4j.ManagedTransaction, text: str, params: dict[str, Any]) -> Result:
    return _collect(tx.run(text, params))


_run_read = _run_write  # the access mode, not the function, decides what the server allows


def _collect(result: neo4j.Result) -> Result:
    columns = list(result.keys())
    return Result(columns, [[_plain(v) for v in record.values()] for record in result])


def _plain(value: Any) -> Any:
    """Nodes, relationships and paths as JSON-friendly values, the same shape as on FalkorDB."""
    if isinstance(value, graph.Node):
        return {"_labels": sorted(value.labels), **dict(value)}
    if isinstance(value, graph.Relationship):
        return {"_type": value.type, **dict(value)}
    if isinstance(value, graph.Path):
        items: list[Any] = [_plain(value.nodes[0])]
        for rel, node in zip(value.relationships, value.nodes[1:], strict=True):
            items += [_plain(rel), _plain(node)]
        return items
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]
