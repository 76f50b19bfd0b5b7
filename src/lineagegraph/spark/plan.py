"""Read what lineage needs out of a Spark ``QueryExecution`` into plain Python values.

This runs on Spark's listener-bus thread (a Py4J callback), so it does the least JVM work that
lineage needs and nothing else: one ``toJSON()`` of the analysed plan (node classes, expression
ids, nested queries), then a short walk through Py4J to each relation leaf and to the write
command, for what the JSON leaves out (file paths, table locations, connection options). The
worker thread turns the result into lineage (`lineagegraph.spark.actions`); no Java object
outlives the callback.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from typing import Any

SEP = "\u0001"  # joins Scala sequences in one Py4J call; never appears in names or paths
Step = tuple[str, str | int]  # ("c", i) a child, ("f", name) a field, ("i", i) a Seq element
Path = tuple[Step, ...]

RELATION_LEAVES = frozenset({"LogicalRelation", "HiveTableRelation", "DataSourceV2Relation"})
# Options worth keeping from a JDBC or spark-snowflake source: names, never credentials.
NAME_OPTIONS = frozenset(
    {"url", "dbtable", "query", "sfurl", "sfaccount", "sfdatabase", "sfschema"}
)
_URL_SECRETS = re.compile(r"//[^/@]*@")  # user:password@ in a JDBC URL authority


@dataclass(frozen=True)
class Relation:
    """A source or target as Spark names it, before it becomes a urn.

    kind: files (paths), table (catalog table, maybe with a location), jdbc or snowflake
    (options), unknown (detail names the relation class).
    """

    kind: str
    paths: tuple[str, ...] = ()
    table: tuple[str, ...] = ()
    location: str | None = None
    options: tuple[tuple[str, str], ...] = ()
    detail: str = ""

    def option(self, key: str) -> str | None:
        return dict(self.options).get(key)


@dataclass(frozen=True)
class Write:
    """The write command at the root of the plan: its target, mode, column names and their
    types (Spark's simple strings: `bigint`, `decimal(10,2)`), when the command says."""

    command: str
    target: Relation
    mode: str | None
    columns: tuple[str, ...] | None
    types: tuple[str, ...] | None = None


@dataclass
class Node:
    """One node of the plan's JSON: a plan or expression node, with nested trees parsed."""

    cls: str
    fields: dict[str, Any]
    children: list[Node]
    path: Path

    @property
    def name(self) -> str:
        return self.cls.rsplit(".", 1)[-1]


@dataclass
class Captured:
    """Everything the worker needs about one finished (or failed) action."""

    func: str
    execution_id: int
    start_ms: int
    duration_ms: int
    root: Node | None = None
    relations: dict[Path, Relation] = field(default_factory=dict)
    write: Write | None = None
    error: str | None = None  # set for a failed action
    problems: list[str] = field(default_factory=list)


def capture_success(func: str, qe: Any, duration_ns: int) -> Captured:
    """Read one successful action's plan; JVM errors on a part become `problems`, not raises."""
    captured = Captured(func, _execution_id(qe), _start_ms(qe, duration_ns), duration_ns // 10**6)
    plan = qe.analyzed()
    captured.root = parse_plan(json.loads(plan.toJSON()))
    cache: dict[Path, Any] = {(): plan}
    for node in iter_nodes(captured.root):
        if node.name in RELATION_LEAVES:
            try:
                captured.relations[node.path] = read_relation(node.name, _at(cache, node.path))
            except Exception as exc:  # one unreadable leaf must not lose the rest
                captured.problems.append(f"{node.name}: {type(exc).__name__}: {exc}")
    try:
        captured.write = read_write(captured.root.name, plan, qe)
    except Exception as exc:
        captured.problems.append(f"{captured.root.name}: {type(exc).__name__}: {exc}")
    return captured


def capture_failure(func: str, qe: Any, exception: Any) -> Captured:
    message = str(exception.getMessage() or exception.toString())
    return Captured(
        func, _execution_id(qe), int(time.time() * 1000), 0, error=message.splitlines()[0][:500]
    )


# --- the JSON plan ------------------------------------------------------------------------


def parse_plan(flat: list[dict[str, Any]]) -> Node:
    """Rebuild the tree `TreeNode.toJSON` flattens (pre-order, `num-children` per node)."""
    node, end = _parse(flat, 0, ())
    if end != len(flat):
        raise ValueError(f"plan JSON has {len(flat) - end} nodes after its root")
    return node


def _parse(flat: list[dict[str, Any]], pos: int, path: Path) -> tuple[Node, int]:
    raw = flat[pos]
    fields = {
        key: _nested(value, (*path, ("f", key)))
        for key, value in raw.items()
        if key not in ("class", "num-children")
    }
    children = []
    pos += 1
    for index in range(int(raw["num-children"])):
        child, pos = _parse(flat, pos, (*path, ("c", index)))
        children.append(child)
    return Node(str(raw["class"]), fields, children, path), pos


def _is_tree(value: Any) -> bool:
    return (
        isinstance(value, list)
        and bool(value)
        and isinstance(value[0], dict)
        and "class" in value[0]
        and "num-children" in value[0]
    )


def _nested(value: Any, path: Path) -> Any:
    """A field holding a tree (a nested query, an expression) or a list of them is parsed."""
    if _is_tree(value):
        return parse_plan_at(value, path)
    if isinstance(value, list) and any(isinstance(v, list) for v in value):
        return [_nested(v, (*path, ("i", i))) for i, v in enumerate(value)]
    return value


def parse_plan_at(flat: list[dict[str, Any]], path: Path) -> Node:
    node, _ = _parse(flat, 0, path)
    return node


def iter_nodes(node: Node) -> list[Node]:
    """Every node in the tree, nested trees included, in pre-order."""
    out: list[Node] = []
    stack = [node]
    while stack:
        current = stack.pop()
        out.append(current)
        nested: list[Node] = []
        for value in current.fields.values():
            _collect_nodes(value, nested)
        stack.extend(reversed(nested + current.children))
    return out


def _collect_nodes(value: Any, out: list[Node]) -> None:
    if isinstance(value, Node):
        out.append(value)
    elif isinstance(value, list):
        for item in value:
            _collect_nodes(item, out)


# --- Py4J reads ---------------------------------------------------------------------------


def _at(cache: dict[Path, Any], path: Path) -> Any:
    """The JVM object at `path` from the root, reusing the objects of shared prefixes."""
    if path in cache:
        return cache[path]
    parent = _at(cache, path[:-1])
    kind, key = path[-1]
    if kind == "c":
        obj = parent.children().apply(key)
    elif kind == "i":
        obj = parent.apply(key)
    else:
        obj = getattr(parent, str(key))()
        if obj.getClass().getName() == "scala.Some":  # e.g. Join.condition
            obj = obj.get()
    cache[path] = obj
    return obj


def _option(value: Any) -> Any | None:
    return value.get() if value.isDefined() else None


def _strings(seq: Any) -> tuple[str, ...]:
    text = str(seq.mkString(SEP))
    return tuple(text.split(SEP)) if text else ()


def read_relation(kind: str, obj: Any) -> Relation:
    """What a relation leaf reads: paths, a catalog table, or connection options."""
    if kind == "HiveTableRelation":
        return _table(obj.tableMeta())
    if kind == "DataSourceV2Relation":
        catalog, ident = _option(obj.catalog()), _option(obj.identifier())
        if catalog is None or ident is None:
            return Relation("unknown", detail=f"DataSourceV2Relation {obj.name()}")
        parts = (str(catalog.name()), *map(str, ident.namespace()), str(ident.name()))
        return Relation("table", table=parts)
    relation = obj.relation()
    rcls = str(relation.getClass().getName())
    table = _option(obj.catalogTable())
    if table is not None:
        return _table(table)
    if rcls.endswith(".HadoopFsRelation"):
        return Relation("files", paths=_strings(relation.location().rootPaths()))
    if rcls.endswith(".JDBCRelation"):
        options = relation.jdbcOptions()
        return _jdbc(str(options.url()), str(options.tableOrQuery()))
    if rcls.startswith("net.snowflake.spark.snowflake."):
        return Relation("snowflake", options=_name_options(relation.params().parameters()))
    return Relation("unknown", detail=rcls)


def _table(table: Any, session: Any = None) -> Relation:
    parts = _strings(table.identifier().nameParts())
    location = _option(table.storage().locationUri())
    if location is None and session is not None:
        location = _catalog_location(session, table.identifier())
    return Relation("table", table=parts, location=str(location) if location is not None else None)


def _catalog_location(session: Any, identifier: Any) -> Any | None:
    """A table created by the action has its location in the catalog, not in the plan."""
    catalog = session.sessionState().catalog()
    if catalog.tableExists(identifier):
        return _option(catalog.getTableMetadata(identifier).storage().locationUri())
    return catalog.defaultTablePath(identifier)


def _jdbc(url: str, table: str) -> Relation:
    return Relation("jdbc", options=(("url", redact_jdbc_url(url)), ("dbtable", table)))


def redact_jdbc_url(url: str) -> str:
    """Keep what names the database, drop credentials and properties (`?a=b`, `;a=b`).

    >>> redact_jdbc_url("jdbc:postgresql://u:pw@db:5432/shop?password=x")
    'jdbc:postgresql://db:5432/shop'
    """
    return _URL_SECRETS.sub("//", re.split(r"[?;]", url, maxsplit=1)[0])


def _name_options(options: Any) -> tuple[tuple[str, str], ...]:
    """The naming options of a Scala Map[String,String], keys lower-cased; values of other
    keys (passwords, keys) are never read."""
    found = []
    for key in _strings(options.keys()):
        if key.lower() in NAME_OPTIONS:
            value = str(options.apply(key))
            if key.lower() == "url":
                value = redact_jdbc_url(value)
            found.append((key.lower(), value))
    return tuple(sorted(found))


def _types(plan: Any) -> tuple[str, ...] | None:
    """The types of the columns a command writes (its query's schema), or None: a schema
    version without types is still one (lineagegraph.schemas), lineage must not wait on it."""
    try:
        return tuple(str(f.dataType().simpleString()) for f in plan.query().schema().fields())
    except Exception:  # a JVM error on the schema costs the types only
        return None


def read_write(kind: str, plan: Any, qe: Any) -> Write | None:
    """The target of a write command at the root of the plan, or None for anything else."""
    if kind == "InsertIntoHadoopFsRelationCommand":
        table = _option(plan.catalogTable())
        target = (
            _table(table)
            if table is not None
            else Relation("files", paths=(str(plan.outputPath()),))
        )
        if target.kind == "table" and target.location is None:
            target = Relation("table", table=target.table, location=str(plan.outputPath()))
        columns = _strings(plan.outputColumnNames())
        return Write(kind, target, str(plan.mode()), columns, _types(plan))
    if kind == "CreateDataSourceTableAsSelectCommand":
        target = _table(plan.table(), qe.sparkSession())
        columns = _strings(plan.outputColumnNames())
        return Write(kind, target, str(plan.mode()), columns, _types(plan))
    if kind == "SaveAsV1TableCommand":
        return Write(kind, _table(plan.tableDesc(), qe.sparkSession()), str(plan.mode()), None)
    if kind == "SaveIntoDataSourceCommand":
        source = str(plan.dataSource().getClass().getName())
        options = _name_options(plan.options())
        if source.startswith("net.snowflake.spark.snowflake."):
            target = Relation("snowflake", options=options)
        elif "jdbc" in source.lower():
            found = dict(options)
            target = _jdbc(found.get("url", ""), found.get("dbtable", ""))
        else:
            target = Relation("unknown", detail=source)
        return Write(kind, target, str(plan.mode()), None)
    if kind == "InsertIntoDataSourceCommand":
        mode = "Overwrite" if plan.overwrite() else "Append"
        return Write(kind, read_relation("LogicalRelation", plan.logicalRelation()), mode, None)
    return None


def _execution_id(qe: Any) -> int:
    try:
        return int(qe.id())
    except Exception:  # older Spark: no QueryExecution.id
        return -1


def _start_ms(qe: Any, duration_ns: int) -> int:
    """When the action started: its analysis phase, so nested actions sort inside their parent."""
    try:
        phase = _option(qe.tracker().phases().get("analysis"))
        if phase is not None:
            return int(phase.startTimeMs())
    except Exception:  # fall back to the wall clock below
        pass
    return int(time.time() * 1000) - duration_ns // 10**6
