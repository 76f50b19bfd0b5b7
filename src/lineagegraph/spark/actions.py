"""Turn a captured Spark plan into one action's lineage, and that into graph values.

Runs on the listener's worker thread (and again in `harvest spark --spool` for spooled actions):
pure Python over the plain values `lineagegraph.spark.plan` read from the JVM.

Column lineage follows expression ids: an ``Alias`` makes a new id from the ids it references;
a few nodes map columns by position (``Union``, ``Expand``, CTE references); relation leaves
end the chain at a source column. Only direct lineage is kept (a join key or a filter column
does not feed the output), as in ACCESS_HISTORY's ``directSources``.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from lineagegraph import identity
from lineagegraph.column_links import ColumnLink, column_items
from lineagegraph.graph.history import History
from lineagegraph.identity import FoldRules
from lineagegraph.masking import DEFAULT_NAMES, along, either
from lineagegraph.model import (
    Asset,
    AssetKind,
    Flow,
    Item,
    Scalar,
    Transformation,
)
from lineagegraph.schemas import Fields, SchemaSeen
from lineagegraph.spark.plan import Captured, Node, Relation, iter_nodes

if TYPE_CHECKING:
    from lineagegraph.graph.store import GraphStore
    from lineagegraph.graph.writer import GraphWriter

SCHEMA_VERSION = 1
PRODUCER = "https://github.com/lineagegraph/lineagegraph"
RUN_EVENT_SCHEMA = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"
_FACET_SCHEMA = "https://openlineage.io/spec/facets/1-0-1/{}.json#/$defs/{}"

# Nodes whose output is their child's (or their left child's), with no new expression ids.
PASS_THROUGH = frozenset(
    {
        "Filter",
        "Sort",
        "GlobalLimit",
        "LocalLimit",
        "Offset",
        "Tail",
        "Distinct",
        "Deduplicate",
        "DeduplicateWithinWatermark",
        "SubqueryAlias",
        "View",
        "Repartition",
        "RepartitionByExpression",
        "RebalancePartitions",
        "Sample",
        "ResolvedHint",
        "Intersect",
        "Except",
        "WithCTE",
        "CTERelationDef",
        "Join",
    }
)
# Leaves that read nothing lineage can name (in-memory data, literals).
NO_SOURCE_LEAVES = frozenset({"LogicalRDD", "LocalRelation", "Range", "OneRowRelation"})
KNOWN_NODES = PASS_THROUGH | NO_SOURCE_LEAVES | {
    "Project", "Aggregate", "Window", "Generate", "Expand", "Union", "CTERelationRef",
    "LogicalRelation", "HiveTableRelation", "DataSourceV2Relation",
}  # fmt: skip
_LEFT_ONLY_JOINS = ("LeftSemi", "LeftAnti", "ExistenceJoin")


class LineageError(ValueError):
    """A captured plan or spooled record that cannot be turned into lineage."""


@dataclass(frozen=True)
class AppInfo:
    """The Spark application, read once at install time."""

    name: str
    app_id: str
    user: str | None = None
    spark_version: str = ""


@dataclass(frozen=True)
class DatasetRef:
    urn: str
    kind: AssetKind
    alias: str | None = None  # a catalog table's db.table when its urn is its location


@dataclass
class SparkAction:
    """One action's lineage, as spooled, replayed and emitted (plain JSON values)."""

    app: str
    app_id: str
    user: str | None
    func: str
    execution_id: int
    at: int
    duration_ms: int
    command: str
    mode: str | None
    output: DatasetRef
    inputs: list[DatasetRef] = field(default_factory=list)
    columns: list[str] = field(default_factory=list)
    links: list[ColumnLink] = field(default_factory=list)
    types: list[str] = field(default_factory=list)  # of `columns` when known (spooled older: [])
    unknown_nodes: list[str] = field(default_factory=list)

    @property
    def run_id(self) -> str:
        return f"{self.app_id}#{self.execution_id}"

    def fields(self) -> Fields:
        """The output's (column, type): types None when not known (older spool records)."""
        types = self.types if len(self.types) == len(self.columns) else [None] * len(self.columns)
        return tuple(zip(self.columns, types, strict=True))

    @property
    def transformation_urn(self) -> str:
        return identity.spark_transformation_urn(self.app, self.output.urn)

    def to_record(self) -> dict[str, Any]:
        return {"type": "action", "v": SCHEMA_VERSION, **asdict(self)}

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> SparkAction:
        try:
            data = {k: v for k, v in record.items() if k not in ("type", "v")}
            data["output"] = DatasetRef(**data["output"])
            data["inputs"] = [DatasetRef(**d) for d in data.get("inputs", [])]
            data["links"] = [ColumnLink(**_masked_tuple(d)) for d in data.get("links", [])]
            action = cls(**data)
            identity.system_of(action.output.urn)
            return action
        except (KeyError, TypeError, identity.IdentityError) as exc:
            raise LineageError(f"not a Spark action record: {type(exc).__name__}: {exc}") from None


@dataclass(frozen=True)
class Naming:
    """What urns need besides the plan: fold rules and the Snowflake account (if set)."""

    rules: FoldRules = identity.NO_FOLD_RULES
    snowflake_account: str | None = None
    masking: frozenset[str] = DEFAULT_NAMES  # functions that mask (lineagegraph.masking)


@dataclass
class Analysis:
    """The outcome for one captured plan: an action, or why there is none."""

    action: SparkAction | None
    skipped: str | None = None  # no_output, unnamed_output
    unknown_nodes: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def analyze(captured: Captured, app: AppInfo, naming: Naming) -> Analysis:
    """The lineage of one successful action; actions that write nothing are noise."""
    root, write = captured.root, captured.write
    if root is None or write is None:
        return Analysis(None, "no_output")
    problems = list(captured.problems)
    try:
        output = dataset_ref(write.target, naming)
    except identity.IdentityError as exc:
        problems.append(f"output of {write.command}: {exc}")
        output = None
    if output is None:
        return Analysis(None, "unnamed_output", problems=problems)
    query = root.children[0] if root.children else root.fields.get("query")
    if not isinstance(query, Node):
        return Analysis(None, "no_output", problems=problems)
    tracer = _Tracer(query, naming.masking)
    sources: dict[int, list[tuple[str, str]]] = {}
    inputs: dict[str, DatasetRef] = {}
    for node in tracer.nodes:
        if node.name not in ("LogicalRelation", "HiveTableRelation", "DataSourceV2Relation"):
            continue
        for ref in _input_refs(captured.relations.get(node.path), naming, problems):
            inputs.setdefault(ref.urn, ref)
            for expr_id, column in _attributes(node.fields.get("output")):
                sources.setdefault(expr_id, []).append((ref.urn, column))
    out_attrs = tracer.output(query)
    names = list(write.columns) if write.columns else [name for _, name in out_attrs]
    if len(names) != len(out_attrs):
        problems.append(f"{write.command}: {len(names)} column names for {len(out_attrs)} columns")
        names = [name for _, name in out_attrs]
    links = [
        ColumnLink(src_urn, src_col, column, masked)
        for (expr_id, _), column in zip(out_attrs, names, strict=True)
        for (src_urn, src_col), masked in sorted(tracer.sources_of(expr_id, sources).items())
    ]
    action = SparkAction(
        app=app.name,
        app_id=app.app_id,
        user=app.user,
        func=captured.func,
        execution_id=captured.execution_id,
        at=captured.start_ms,
        duration_ms=captured.duration_ms,
        command=write.command,
        mode=write.mode,
        output=output,
        inputs=list(inputs.values()),
        columns=names,
        links=links,
        types=list(write.types or ()) if len(write.types or ()) == len(names) else [],
        unknown_nodes=sorted(tracer.unknown),
    )
    return Analysis(action, unknown_nodes=action.unknown_nodes, problems=problems)


def _input_refs(relation: Relation | None, naming: Naming, problems: list[str]) -> list[DatasetRef]:
    """What one relation leaf reads: a read of several paths reads each folded dataset."""
    if relation is None:
        return []
    try:
        if relation.kind == "files":
            urns = {identity.dataset_urn(path, naming.rules) for path in relation.paths}
            return [DatasetRef(urn, "Dataset") for urn in sorted(urns)]
        ref = dataset_ref(relation, naming)
    except identity.IdentityError as exc:
        problems.append(f"input {relation.kind}: {exc}")
        return []
    return [ref] if ref else []


# --- urns ---------------------------------------------------------------------------------


def dataset_ref(relation: Relation, naming: Naming) -> DatasetRef | None:
    """The urn of what a relation names (docs/identity.md), or None when it names nothing
    lineage can use (a JDBC or Snowflake *query* instead of a table, an unknown source)."""
    if relation.kind == "files":  # a write target: one path
        return DatasetRef(identity.dataset_urn(relation.paths[0], naming.rules), "Dataset")
    if relation.kind == "table":
        alias = ".".join(relation.table[-2:]) if relation.table else None
        location = relation.location
        if location and location.partition(":")[0].lower() in ("file", "s3", "s3a", "s3n"):
            return DatasetRef(identity.dataset_urn(location, naming.rules), "Dataset", alias)
        if location and location.startswith("/"):
            return DatasetRef(identity.dataset_urn(location, naming.rules), "Dataset", alias)
        parts = relation.table
        if len(parts) < 2:
            raise identity.IdentityError(f"catalog table without a database: {parts!r}")
        catalog, database = (
            ("spark_catalog", parts[0]) if len(parts) == 2 else (parts[0], ".".join(parts[1:-1]))
        )
        return DatasetRef(identity.spark_table_urn(catalog, database, parts[-1]), "Dataset")
    if relation.kind == "jdbc":
        return _jdbc_ref(relation.option("url") or "", relation.option("dbtable") or "", naming)
    if relation.kind == "snowflake":
        return _snowflake_ref(relation, naming)
    return None


def _jdbc_ref(url: str, table: str, naming: Naming) -> DatasetRef | None:
    """OpenLineage's JDBC naming: namespace `{db type}://{host:port}`, name `{db}.{table}`."""
    if not table or table.lstrip().startswith("("):  # a query, not a table
        return None
    rest = url.removeprefix("jdbc:")
    scheme, sep, target = rest.partition(":")
    if not sep or not scheme:
        raise identity.IdentityError(f"not a JDBC URL: {url!r}")
    if scheme == "snowflake" and naming.snowflake_account:
        return DatasetRef(identity.snowflake_urn(naming.snowflake_account, table), "Table")
    if target.startswith("//"):
        authority, _, database = target[2:].partition("/")
        namespace = f"{scheme}://{authority}"
        name = f"{database}.{table}" if database else table
    else:  # e.g. derby:memory:db, h2:mem:x: the database is the rest
        namespace, name = f"{scheme}://{target}", table
    return DatasetRef(identity.openlineage_urn(namespace, name, naming.rules), "Table")


def _snowflake_ref(relation: Relation, naming: Naming) -> DatasetRef | None:
    table = relation.option("dbtable")
    if not table:
        return None  # a `query` source reads tables Snowflake's own lineage names
    account = naming.snowflake_account or relation.option("sfaccount")
    if not account:
        host = (relation.option("sfurl") or "").split("://")[-1]
        account = host.split(".snowflakecomputing.com")[0].split(".")[0]
    database, schema = relation.option("sfdatabase"), relation.option("sfschema")
    urn = identity.snowflake_urn(
        account,
        table,
        database=identity.parse_snowflake_name(database)[0] if database else None,
        schema=identity.parse_snowflake_name(schema)[0] if schema else None,
    )
    return DatasetRef(urn, "Table")


# --- column lineage -----------------------------------------------------------------------


def _attributes(value: Any) -> list[tuple[int, str]]:
    """(exprId, name) of each named expression in a list of expression trees."""
    out = []
    for tree in value if isinstance(value, list) else []:
        if isinstance(tree, Node) and isinstance(tree.fields.get("exprId"), dict):
            out.append((int(tree.fields["exprId"]["id"]), str(tree.fields.get("name"))))
    return out


# Spark expression classes by the name SQL calls them (`hash()` is Murmur3Hash).
_SPARK_FUNCTIONS = {
    "Murmur3Hash": "HASH",
    "HyperLogLogPlusPlus": "APPROX_COUNT_DISTINCT",
    "Sha1": "SHA1",
    "Sha2": "SHA2",
    "Md5": "MD5",
    "XxHash64": "XXHASH64",
    "Crc32": "CRC32",
    "Count": "COUNT",
}


def _masked_references(tree: Any, masking: frozenset[str]) -> dict[int, tuple[str, ...]]:
    """The expression ids an expression reads, each with the masking functions around it
    (empty when one occurrence is read plainly)."""
    found: dict[int, tuple[str, ...]] = {}
    stack: list[tuple[Any, tuple[str, ...]]] = [(tree, ())]
    while stack:
        value, fns = stack.pop()
        if isinstance(value, list):
            stack.extend((item, fns) for item in value)
            continue
        if not isinstance(value, Node):
            continue
        name = _SPARK_FUNCTIONS.get(value.name, value.name.upper())
        if name in masking:
            fns = along(fns, (name,))
        expr_id = value.fields.get("exprId")
        if value.name in ("AttributeReference", "OuterReference") and isinstance(expr_id, dict):
            ref = int(expr_id["id"])
            found[ref] = either(found[ref], fns) if ref in found else fns
        nested = [v for v in value.fields.values() if isinstance(v, Node | list)]
        stack.extend((child, fns) for child in [*value.children, *nested])
    return found


def _references(tree: Any) -> set[int]:
    """The expression ids an expression reads."""
    found: set[int] = set()
    nodes: list[Node] = []
    if isinstance(tree, Node):
        nodes = iter_nodes(tree)
    elif isinstance(tree, list):
        for item in tree:
            found |= _references(item)
    for node in nodes:
        if node.name in ("AttributeReference", "OuterReference") and isinstance(
            node.fields.get("exprId"), dict
        ):
            found.add(int(node.fields["exprId"]["id"]))
    return found


class _Tracer:
    """Expression-id dependencies of one query, and the output columns of its nodes; a
    dependency only through masking functions (`sha2(email)`, `count(id)`) is remembered with
    them."""

    def __init__(self, query: Node, masking: frozenset[str] = frozenset()) -> None:
        self.nodes = iter_nodes(query)
        self.masking = masking
        self.deps: dict[int, set[int]] = {}
        self.masked: dict[tuple[int, int], tuple[str, ...]] = {}  # (alias, reference) -> fns
        self.unknown: set[str] = set()
        self._outputs: dict[int, list[tuple[int, str]]] = {}
        self._ctes = {
            node.fields.get("id"): node.children[0]
            for node in self.nodes
            if node.name == "CTERelationDef" and node.children
        }
        for node in self.nodes:
            if "expressions" in node.cls or ".catalyst.expressions." in node.cls:
                if node.name == "Alias" and isinstance(node.fields.get("exprId"), dict):
                    alias = int(node.fields["exprId"]["id"])
                    self._depend(alias, _references(node.children))
                    if self.masking:
                        for ref, fns in _masked_references(node.children, self.masking).items():
                            if fns:
                                self.masked[alias, ref] = fns
                continue
            self._plan_node(node)

    def _depend(self, expr_id: int, sources: Iterable[int]) -> None:
        self.deps.setdefault(expr_id, set()).update(s for s in sources if s != expr_id)

    def _plan_node(self, node: Node) -> None:
        name = node.name
        if name not in KNOWN_NODES and not name.endswith("Command"):
            self.unknown.add(node.cls)
        if name == "Union":
            first, *others = [self.output(child) for child in node.children]
            for other in others:
                for (out_id, _), (in_id, _) in zip(first, other, strict=False):
                    self._depend(out_id, [in_id])
        elif name == "CTERelationRef":
            definition = self._ctes.get(node.fields.get("cteId"))
            if definition is not None:
                for (out_id, _), (in_id, _) in zip(
                    _attributes(node.fields.get("output")), self.output(definition), strict=False
                ):
                    self._depend(out_id, [in_id])
        elif name == "Expand":
            outputs = _attributes(node.fields.get("output"))
            for projection in node.fields.get("projections") or []:
                for (out_id, _), expression in zip(outputs, projection, strict=False):
                    self._depend(out_id, _references(expression))
        elif name == "Generate":
            refs = _references(node.fields.get("generator"))
            for out_id, _ in _attributes(node.fields.get("generatorOutput")):
                self._depend(out_id, refs)

    def output(self, node: Node) -> list[tuple[int, str]]:
        """The columns a plan node produces, as (exprId, name)."""
        key = id(node)
        if key not in self._outputs:
            self._outputs[key] = self._compute_output(node)
        return self._outputs[key]

    def _compute_output(self, node: Node) -> list[tuple[int, str]]:
        name, kids = node.name, node.children
        if name == "Project":
            return _attributes(node.fields.get("projectList"))
        if name == "Aggregate":
            return _attributes(node.fields.get("aggregateExpressions"))
        if name == "Window" and kids:
            return self.output(kids[0]) + _attributes(node.fields.get("windowExpressions"))
        if name == "Generate" and kids:
            return self.output(kids[0]) + _attributes(node.fields.get("generatorOutput"))
        if name == "Join" and len(kids) == 2:
            join_type = str((node.fields.get("joinType") or {}).get("object", ""))
            left = self.output(kids[0])
            return (
                left
                if any(t in join_type for t in _LEFT_ONLY_JOINS)
                else (left + self.output(kids[1]))
            )
        if name in ("Union", "Intersect", "Except") and kids:
            return self.output(kids[0])
        if name == "WithCTE" and kids:
            return self.output(kids[-1])
        if isinstance(node.fields.get("output"), list):
            return _attributes(node.fields["output"])
        return [column for child in kids for column in self.output(child)]

    def sources_of(
        self, expr_id: int, sources: dict[int, list[tuple[str, str]]]
    ) -> dict[tuple[str, str], tuple[str, ...]]:
        """The source columns an expression id derives from, through any number of steps, each
        with the masking functions on its way (empty when some way copies it plainly)."""
        found: dict[tuple[str, str], tuple[str, ...]] = {}
        seen: set[tuple[int, tuple[str, ...]]] = set()
        stack: list[tuple[int, tuple[str, ...]]] = [(expr_id, ())]
        while stack:
            current, fns = stack.pop()
            if (current, fns) in seen:
                continue
            seen.add((current, fns))
            for pair in sources.get(current, ()):
                found[pair] = either(found[pair], fns) if pair in found else fns
            for dep in self.deps.get(current, ()):
                stack.append((dep, along(fns, self.masked.get((current, dep), ()))))
        return found


# --- graph values -------------------------------------------------------------------------


def action_items(action: SparkAction) -> Iterator[Item | SchemaSeen]:
    """The assets, transformation, flows and column lineage of one action, and its output's
    schema (source spark, at the action's start)."""
    via = action.transformation_urn
    at = action.at
    for ref in [*action.inputs, action.output]:
        props: dict[str, Scalar] = {"spark_table": ref.alias} if ref.alias else {}
        system = identity.system_of(ref.urn)
        yield Asset(ref.urn, ref.kind, system, identity.name_of(ref.urn), at, props)
    yield Transformation(
        urn=via,
        system="spark",
        name=f"{action.app}: {identity.name_of(action.output.urn)}",
        run_id=action.run_id,
        run_at=at,
        user=action.user,
        reads=tuple(ref.urn for ref in action.inputs),
        writes=(action.output.urn,),
    )
    for ref in action.inputs:
        yield Flow(ref.urn, action.output.urn, at, via)
    yield from column_items(action.output.urn, action.columns, action.links, at, via)
    if action.columns:
        yield SchemaSeen(action.output.urn, "spark", at, action.fields())


def write_actions(store: GraphStore, writer: GraphWriter, actions: list[SparkAction]) -> None:
    """Write actions and flush, then their Spark details (mode, command) on the transformation.
    An action's run of its transformation says what it reads now: inputs of earlier runs it no
    longer reads stop holding (lineagegraph.graph.history)."""
    items = [list(action_items(action)) for action in actions]
    history = History()
    for action_values in items:
        history.take(action_values)
    for action_values in items:
        writer.add_all(action_values)
    writer.flush()
    history.write(store)
    rows = [
        {"urn": a.transformation_urn, "run_at": a.at, "mode": a.mode, "command": a.command}
        for a in actions
    ]
    if rows:
        store.write_batches("spark_transformation_details", rows, ("urn",))


# --- OpenLineage --------------------------------------------------------------------------


def urn_to_openlineage(urn: str) -> tuple[str, str]:
    """The OpenLineage (namespace, name) that `identity.openlineage_urn` maps back to `urn`.

    >>> urn_to_openlineage("file:///tmp/out"), urn_to_openlineage("s3://b/sales")
    (('file', '/tmp/out'), ('s3://b', 'sales'))
    >>> urn_to_openlineage("snowflake://acct/DB.S.T")
    ('snowflake://acct', 'DB.S.T')
    """
    scheme, _, rest = urn.partition("://")
    if scheme == "file":
        return "file", rest or "/"
    authority, _, name = rest.partition("/")
    if not name:  # a bucket root
        return f"{scheme}://{authority}", "/"
    return f"{scheme}://{authority}", name


def _facet(name: str, schema: str, **content: Any) -> dict[str, Any]:
    return {"_producer": PRODUCER, "_schemaURL": _FACET_SCHEMA.format(name, schema), **content}


def _ol_dataset(ref: DatasetRef, namespace_of_tables: str) -> dict[str, Any]:
    namespace, name = urn_to_openlineage(ref.urn)
    dataset: dict[str, Any] = {"namespace": namespace, "name": name, "facets": {}}
    if ref.alias:
        dataset["facets"]["symlinks"] = _facet(
            "SymlinksDatasetFacet",
            "SymlinksDatasetFacet",
            identifiers=[{"namespace": namespace_of_tables, "name": ref.alias, "type": "TABLE"}],
        )
    return dataset


def _masked_tuple(link: dict[str, Any]) -> dict[str, Any]:
    """A spooled link with its masked_by list as the tuple it was (anything else is left for
    the replay's type check to name)."""
    masked = link.get("masked_by", [])
    return {**link, "masked_by": tuple(masked) if isinstance(masked, list) else masked}


def run_uuid(app_id: str, execution_id: int) -> str:
    """A stable run id, so an action emitted twice is one OpenLineage run."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"spark:{app_id}#{execution_id}"))


def iso_time(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="milliseconds")


def to_openlineage(action: SparkAction, job_namespace: str) -> dict[str, Any]:
    """A COMPLETE RunEvent with the columnLineage and symlinks facets (OpenLineage 2-0-2)."""
    tables_ns = f"spark://{action.app}"
    output = _ol_dataset(action.output, tables_ns)
    fields: dict[str, Any] = {}
    for link in action.links:
        namespace, name = urn_to_openlineage(link.source)
        entry: dict[str, Any] = {"namespace": namespace, "name": name, "field": link.source_column}
        if link.masked_by:  # the facet's transformations (1-2-0): each masking, by name
            entry["transformations"] = [
                {"type": "DIRECT", "subtype": "TRANSFORMATION", "description": f, "masking": True}
                for f in link.masked_by
            ]
        fields.setdefault(link.column, {"inputFields": []})["inputFields"].append(entry)
    if fields:
        output["facets"]["columnLineage"] = _facet(
            "ColumnLineageDatasetFacet", "ColumnLineageDatasetFacet", fields=fields
        )
    if action.columns:
        output["facets"]["schema"] = _facet(
            "SchemaDatasetFacet",
            "SchemaDatasetFacet",
            fields=[
                {"name": column, **({"type": kind} if kind else {})}
                for column, kind in action.fields()
            ],
        )
    if action.mode == "Overwrite":
        output["facets"]["lifecycleStateChange"] = _facet(
            "LifecycleStateChangeDatasetFacet",
            "LifecycleStateChangeDatasetFacet",
            lifecycleStateChange="OVERWRITE",
        )
    return {
        "eventType": "COMPLETE",
        "eventTime": iso_time(action.at + action.duration_ms),
        "producer": PRODUCER,
        "schemaURL": RUN_EVENT_SCHEMA,
        "run": {
            "runId": run_uuid(action.app_id, action.execution_id),
            "facets": {
                "nominalTime": _facet(
                    "NominalTimeRunFacet",
                    "NominalTimeRunFacet",
                    nominalStartTime=iso_time(action.at),
                ),
            },
        },
        "job": {"namespace": job_namespace, "name": f"{action.app}.{action.output.urn}"},
        "inputs": [_ol_dataset(ref, tables_ns) for ref in action.inputs],
        "outputs": [output],
    }


def failure_to_openlineage(
    app: AppInfo, func: str, execution_id: int, at: int, error: str, job_namespace: str
) -> dict[str, Any]:
    """A FAIL RunEvent: a failed action is a run, never lineage."""
    return {
        "eventType": "FAIL",
        "eventTime": iso_time(at),
        "producer": PRODUCER,
        "schemaURL": RUN_EVENT_SCHEMA,
        "run": {
            "runId": run_uuid(app.app_id, execution_id),
            "facets": {
                "errorMessage": _facet(
                    "ErrorMessageRunFacet",
                    "ErrorMessageRunFacet",
                    message=error,
                    programmingLanguage="python",
                )
            },
        },
        "job": {"namespace": job_namespace, "name": f"{app.name}.{func}"},
        "inputs": [],
        "outputs": [],
    }


class RunEventSink:
    """A sink that sends each action, and each failed action, as one OpenLineage RunEvent;
    a subclass says where (`offer`): a file, an HTTP endpoint, a Kafka topic."""

    def __init__(self, app: AppInfo, namespace: str) -> None:
        self.app = app
        self.namespace = namespace

    def offer(self, event: dict[str, Any]) -> None:
        raise NotImplementedError

    def action(self, action: SparkAction) -> None:
        self.offer(to_openlineage(action, self.namespace))

    def failure(self, captured: Captured) -> None:
        self.offer(
            failure_to_openlineage(
                self.app,
                captured.func,
                captured.execution_id,
                captured.start_ms,
                captured.error or "",
                self.namespace,
            )
        )
