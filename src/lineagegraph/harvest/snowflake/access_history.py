"""One ACCESS_HISTORY row (with its QUERY_HISTORY facts) to model values (docs/lineage.md).

- Every object in `objects_modified` FLOWS_TO from every object in `direct_objects_accessed`
  (direct, not base, so a view stays on the path); the writer drops self edges.
- Each modified column FEEDS from its `directSources`, masked (`masked_by`) when the query text
  computes it from that source only through masking functions (harvest/snowflake/masking.py),
  or when `policies_referenced` names a masking policy on that source column (the query read
  it masked; `masking policy DB.SCHEMA.NAME`), unless settings list the policy as unmasking.
  A COPY from a stage has none for the file side: with MATCH_BY_COLUMN_NAME, each target
  column FEEDS from the column of the same name (exactly, or ignoring case) that the graph
  already knows for the stage's dataset (the Spark listener writes a dataset's output columns).
- The query is a :Transformation keyed by QUERY_PARAMETERIZED_HASH (or its targets and sources)
  that READS_FROM its direct objects and WRITES_TO what it modified; a read-only query only reads.
- Base objects only teach a view's upstreams, for views OBJECT_DEPENDENCIES does not list.
- A DROP in `object_modified_by_ddl` soft-deletes the object at the query's time.

The VARIANT columns arrive as JSON text and are parsed here, so a malformed row raises
MalformedRow naming its query id and the column at fault, and the harvest goes on without it.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from lineagegraph.harvest.snowflake.masking import Masks, query_masks, table_name
from lineagegraph.harvest.snowflake.queries import ACCESS_HISTORY_COLUMNS
from lineagegraph.harvest.snowflake.stages import (
    StageResolver,
    is_unnamed_stage,
    qualified_stage_name,
    stage_dataset_urns,
    stage_paths,
)
from lineagegraph.identity import (
    FoldRules,
    IdentityError,
    column_urn,
    dataset_urn,
    name_of,
    snowflake_query_transformation_urn,
    snowflake_urn,
    system_of,
)
from lineagegraph.jsonlines import BadText, parse_json
from lineagegraph.masking import DEFAULT_NAMES, along
from lineagegraph.model import (
    Asset,
    AssetKind,
    Column,
    ColumnFeed,
    Flow,
    Item,
    SoftDelete,
    Transformation,
)

SYSTEM = "snowflake"

# objectDomain values (compared lower-cased: ACCESS_HISTORY writes "Table", OBJECT_DEPENDENCIES
# "TABLE") of objects that are :Table assets. Functions, procedures, policies are not assets.
TABLE_DOMAINS = frozenset(
    {
        "table",
        "view",
        "materialized view",
        "secure view",
        "external table",
        "dynamic table",
        "iceberg table",
        "hybrid table",
        "event table",
        "stream",
    }
)
VIEW_DOMAINS = frozenset({"view", "materialized view", "secure view"})
STAGE_DOMAIN = "stage"

# COPY INTO t FROM @stage ... MATCH_BY_COLUMN_NAME = CASE_INSENSITIVE: file columns by name.
_MATCH_BY_NAME = re.compile(
    r"\bMATCH_BY_COLUMN_NAME\s*=\s*'?(CASE_SENSITIVE|CASE_INSENSITIVE)\b", re.IGNORECASE
)

# The column names the graph knows for an asset urn (a dataset's, written by Spark).
ColumnNames = Callable[[str], Sequence[str]]

_VARIANT_ARRAYS = (
    "DIRECT_OBJECTS_ACCESSED",
    "BASE_OBJECTS_ACCESSED",
    "OBJECTS_MODIFIED",
    "POLICIES_REFERENCED",
)
_NAME_CACHE_LIMIT = 200_000
_SHAPE_CACHE_LIMIT = 5_000  # converted rows kept: a few values each


class MalformedRow(ValueError):
    """A row whose VARIANT columns do not parse or do not have ACCESS_HISTORY's shape."""

    def __init__(self, query_id: str, reason: str) -> None:
        super().__init__(f"query {query_id}: {reason}")
        self.query_id = query_id
        self.reason = reason


Output = Item | SoftDelete


@dataclass(frozen=True)
class AccessRecord:
    """One ACCESS_HISTORY row with its VARIANTs parsed and its QUERY_HISTORY facts."""

    query_id: str
    at: int
    user: str | None
    direct: list[Any]
    base: list[Any]
    modified: list[Any]
    ddl: Any
    query_hash: str | None
    query_type: str | None
    database: str | None
    schema: str | None
    query_text: str | None
    policies: list[Any] = field(default_factory=list)  # policies_referenced


def parse_row(row: Sequence[Any]) -> AccessRecord:
    """A cursor row of queries.ACCESS_HISTORY_SINCE, its VARIANT columns parsed client-side."""
    values = dict(zip(ACCESS_HISTORY_COLUMNS, row, strict=True))
    query_id = str(values["QUERY_ID"])
    parsed: dict[str, Any] = {}
    for column in (*_VARIANT_ARRAYS, "OBJECT_MODIFIED_BY_DDL"):
        raw = values[column]
        if column == "BASE_OBJECTS_ACCESSED" and raw == values["DIRECT_OBJECTS_ACCESSED"]:
            parsed[column] = parsed["DIRECT_OBJECTS_ACCESSED"]  # the same text (no views)
            continue
        if isinstance(raw, bytes):
            raw = raw.decode("utf-8", "surrogateescape")
        try:  # parse_json: nesting too deep or a lone surrogate is a reason, not a crash
            value = parse_json(raw) if isinstance(raw, str) else raw
        except BadText as exc:
            reason = str(exc).removeprefix("malformed JSON: ")
            raise MalformedRow(query_id, f"{column} is not valid JSON ({reason})") from None
        if column in _VARIANT_ARRAYS:
            value = [] if value is None else value
            if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
                raise MalformedRow(query_id, f"{column} is not a JSON array of objects")
        elif value is not None and not isinstance(value, dict):
            raise MalformedRow(query_id, "OBJECT_MODIFIED_BY_DDL is not a JSON object")
        parsed[column] = value
    try:
        at = int(values["START_MS"])
    except (TypeError, ValueError):
        raise MalformedRow(query_id, f"no query start time ({values['START_MS']!r})") from None
    return AccessRecord(
        query_id=query_id,
        at=at,
        user=values["USER_NAME"],
        direct=parsed["DIRECT_OBJECTS_ACCESSED"],
        base=parsed["BASE_OBJECTS_ACCESSED"],
        modified=parsed["OBJECTS_MODIFIED"],
        ddl=parsed["OBJECT_MODIFIED_BY_DDL"],
        query_hash=values["QUERY_PARAMETERIZED_HASH"] or None,
        query_type=values["QUERY_TYPE"],
        database=values["DATABASE_NAME"],
        schema=values["SCHEMA_NAME"],
        query_text=values["QUERY_TEXT"],
        policies=parsed["POLICIES_REFERENCED"],
    )


@dataclass
class RowConverter:
    """Turns parsed rows into model values; shared state is the run's stage cache and counts.

    `views_with_dependencies` are the view urns OBJECT_DEPENDENCIES lists: only the others
    learn their upstreams from base objects (docs/lineage.md). `known_columns` gives the columns
    the graph already holds for a dataset, for COPYs that match file columns by name.
    """

    account: str
    stages: StageResolver
    rules: FoldRules
    views_with_dependencies: Collection[str]
    counts: Counter[str] = field(default_factory=Counter)
    known_columns: ColumnNames | None = None
    masking: frozenset[str] = DEFAULT_NAMES
    unmasking_policies: frozenset[str] = frozenset()  # upper case
    _dataset_columns: dict[str, Sequence[str]] = field(default_factory=dict)
    _table_urns: dict[str, str] = field(default_factory=dict)
    _names: dict[str, tuple[str, str]] = field(default_factory=dict)
    _columns: dict[tuple[str, str], str] = field(default_factory=dict)
    _shapes: dict[tuple[Any, ...], tuple[list[Output], Counter[str]]] = field(default_factory=dict)

    def convert(self, record: AccessRecord) -> list[Output]:
        """All model values of one row; MalformedRow if an object in it has the wrong shape."""
        return _RowContext(self, record).outputs()

    def convert_row(self, row: Sequence[Any]) -> list[Output]:
        """`convert(parse_row(row))`, remembered per query shape: a scheduled query repeats
        the same JSON, text and hash, and only its id, time and user differ (the caller takes
        those from the row). The counts are added again for each row."""
        key = tuple(row[3:])
        known = self._shapes.get(key)
        if known is not None:
            self.counts.update(known[1])
            return known[0]
        before = self.counts.copy()
        outputs = self.convert(parse_row(row))
        _cache(self._shapes, key, (outputs, self.counts - before), _SHAPE_CACHE_LIMIT)
        return outputs

    def table_urn(self, object_name: str) -> str:
        """The urn of a table-like object named by Snowflake's metadata, cached (names repeat)."""
        urn = self._table_urns.get(object_name)
        if urn is None:
            urn = snowflake_urn(self.account, object_name, from_metadata=True)
            _cache(self._table_urns, object_name, urn)
        return urn

    def system_and_name(self, urn: str) -> tuple[str, str]:
        """An asset's `system` and `name` properties, cached."""
        found = self._names.get(urn)
        if found is None:
            found = (system_of(urn), name_of(urn))
            _cache(self._names, urn, found)
        return found

    def dataset_columns(self, dataset: str) -> Sequence[str]:
        """The column names the graph knows for a dataset, asked once per run."""
        found = self._dataset_columns.get(dataset)
        if found is None:
            found = self.known_columns(dataset) if self.known_columns else ()
            _cache(self._dataset_columns, dataset, found)
        return found

    def column_urn(self, asset: str, column: str) -> str:
        """`{asset}#{column}`, cached; IdentityError for a name containing '#'."""
        urn = self._columns.get((asset, column))
        if urn is None:
            urn = column_urn(asset, column)
            _cache(self._columns, (asset, column), urn)
        return urn


def _cache(cache: dict[Any, Any], key: Any, value: Any, limit: int = _NAME_CACHE_LIMIT) -> None:
    """Remember a value; a full cache starts over, so memory stays bounded on any window."""
    if len(cache) >= limit:
        cache.clear()
    cache[key] = value


class _RowContext:
    """The work on one row: resolved objects, emitted assets, and the values to write."""

    def __init__(self, converter: RowConverter, record: AccessRecord) -> None:
        self.c = converter
        self.r = record
        self.out: list[Output] = []
        self._assets: set[str] = set()
        self._masks: Masks | None = None
        self._policies: dict[tuple[str, str], tuple[str, ...]] | None = None

    def outputs(self) -> list[Output]:
        r, counts = self.r, self.c.counts
        direct = self._objects(r.direct, "DIRECT_OBJECTS_ACCESSED")
        modified = self._objects(r.modified, "OBJECTS_MODIFIED")
        sources = _distinct(urn for urn, _ in direct)
        targets = _distinct(urn for urn, _ in modified)
        if sources or targets:
            via = snowflake_query_transformation_urn(self.c.account, r.query_hash, targets, sources)
            self.out.append(
                Transformation(
                    urn=via,
                    system=SYSTEM,
                    name=self._job_name(targets or sources, writes=bool(targets)),
                    run_id=r.query_id,
                    run_at=r.at,
                    user=r.user,
                    reads=tuple(sources),
                    writes=tuple(targets),
                )
            )
            counts["queries_writing" if targets else "queries_reading"] += 1
            for target in targets:
                for source in sources:
                    self.out.append(Flow(source, target, r.at, via))
                    counts["table_pairs"] += source != target
            self._column_feeds(modified, via, self._copied_datasets(direct))
        self._view_upstreams(direct)
        self._ddl()
        return self.out

    # --- objects ----------------------------------------------------------------------------

    def _objects(self, entries: list[Any], where: str) -> list[tuple[str, dict[str, Any]]]:
        """(asset urn, entry) for each entry that is an asset; stages may give several."""
        found: list[tuple[str, dict[str, Any]]] = []
        for index, entry in enumerate(entries):
            domain = self._domain(entry, f"{where}[{index}]")
            if domain in TABLE_DOMAINS:
                name = self._text(entry, "objectName", f"{where}[{index}]")
                urn = self._table(name, f"{where}[{index}]")
                self._asset(urn, "Table", {"domain": entry["objectDomain"]})
                found.append((urn, entry))
            elif domain == STAGE_DOMAIN or "location" in entry:
                found.extend((urn, entry) for urn in self._stage(entry, f"{where}[{index}]"))
        return found

    def _stage(self, entry: dict[str, Any], where: str) -> list[str]:
        name = entry.get("objectName")
        if name is None:
            location = entry.get("location")
            if not isinstance(location, str):
                raise MalformedRow(self.r.query_id, f"{where} names no stage nor location")
            try:
                urn = dataset_urn(location, self.c.rules)
            except IdentityError:
                self.c.counts["locations_unsupported"] += 1
                return []
            self._asset(urn, "Dataset", {})
            return [urn]
        if not isinstance(name, str):
            raise MalformedRow(self.r.query_id, f"{where}.objectName is not a string")
        if is_unnamed_stage(name):  # a user (~) or table (%) stage: not a named dataset
            self.c.counts["stages_unnamed"] += 1
            return []
        try:
            stage = qualified_stage_name(name, self.r.database, self.r.schema)
        except IdentityError:
            self.c.counts["stages_unqualified"] += 1
            return []
        kind = entry.get("stageKind")
        resolved = self.c.stages.resolve(stage, kind if isinstance(kind, str) else None)
        paths = stage_paths(self.r.query_text, stage, self.r.database, self.r.schema)
        if resolved.url is not None and not paths:
            self.c.counts["stage_paths_unknown"] += 1
        try:
            urns = stage_dataset_urns(self.c.account, stage, resolved, paths, self.c.rules)
        except IdentityError:  # a gcs:// or azure:// stage: no urn for it yet
            self.c.counts["locations_unsupported"] += 1
            return []
        placeholder = resolved.url is None
        self.c.counts["stage_placeholders"] += placeholder
        for urn in urns:
            self._asset(urn, "Dataset", {"placeholder": True} if placeholder else {})
        return urns

    def _asset(self, urn: str, kind: AssetKind, props: dict[str, Any]) -> None:
        if urn not in self._assets:
            self._assets.add(urn)
            system, name = self.c.system_and_name(urn)
            self.out.append(Asset(urn, kind, system, name, self.r.at, props))

    # --- columns, views, DDL ----------------------------------------------------------------

    def _copied_datasets(self, direct: list[tuple[str, dict[str, Any]]]) -> tuple[list[str], bool]:
        """The stage datasets a COPY matching columns by name reads, and whether case counts;
        none for other queries (their file columns are positions, not names)."""
        found = _MATCH_BY_NAME.search(self.r.query_text or "")
        if found is None:
            return [], False
        datasets = [
            urn
            for urn, entry in direct
            if _lower(entry.get("objectDomain")) == STAGE_DOMAIN
            and not urn.startswith("snowflake://")  # a placeholder: no file columns known
        ]
        return _distinct(datasets), found.group(1).upper() == "CASE_SENSITIVE"

    def _column_feeds(
        self,
        modified: list[tuple[str, dict[str, Any]]],
        via: str,
        copied: tuple[list[str], bool],
    ) -> None:
        at, counts = self.r.at, self.c.counts
        for target, entry in modified:
            if self._domain(entry, "OBJECTS_MODIFIED") not in TABLE_DOMAINS:
                continue
            columns = entry.get("columns") or []
            if not isinstance(columns, list):
                raise MalformedRow(self.r.query_id, f"columns of {target} is not an array")
            for column in columns:
                where = f"a column of {entry['objectName']}"
                name = self._text(column, "columnName", where)
                target_column = self._column(target, name, at)
                if target_column is None:
                    continue
                sources = column.get("directSources") or []
                if not isinstance(sources, list):
                    raise MalformedRow(self.r.query_id, f"directSources of {where} not an array")
                if not sources:
                    self._copied_column(target_column, name, copied, via)
                direct: dict[str, bool] = {}  # source column urn -> is a view's column
                for source in sources:
                    domain = self._domain(source, f"directSources of {where}")
                    if domain not in TABLE_DOMAINS:
                        counts["column_sources_not_tables"] += 1
                        continue
                    source_column = self._source_column(source, where)
                    if source_column is not None:
                        direct[source_column] = domain in VIEW_DOMAINS
                        masked_by = self._masked_by(name, source)
                        counts["column_pairs_masked"] += bool(masked_by)
                        self.out.append(
                            ColumnFeed(source_column, target_column, at, via, masked_by)
                        )
                        counts["column_pairs"] += source_column != target_column
                self._view_column(direct, column.get("baseSources"), where)

    def _masked_by(self, column: str, source: dict[str, Any]) -> tuple[str, ...]:
        """The masking functions between a written column and one of its direct sources, from
        the query text (parsed once per row, and only when a column has sources)."""
        if self._masks is None:
            text = self.r.query_text
            read = {
                str(e["objectName"]): [str(c.get("columnName")) for c in e.get("columns") or []]
                for e in self.r.direct
                if isinstance(e, dict) and isinstance(e.get("objectName"), str)
            }
            self._masks = query_masks(text, self.c.masking, read) if text else {}
        pair = (table_name(str(source["objectName"])), str(source["columnName"]).lower())
        masks = self._masks.get(column.lower(), {}).get(pair, ())
        read = (str(source["objectName"]).upper(), str(source["columnName"]).upper())
        return along(masks, self._masking_policies().get(read, ()))

    def _masking_policies(self) -> dict[tuple[str, str], tuple[str, ...]]:
        """(object, column), upper case -> `masking policy NAME` of each masking policy the
        query read the column through (policies_referenced: a column's policies nest under it;
        row access policies sit on the object and mask nothing)."""
        if self._policies is None:
            self._policies = {}
            for entry in self.r.policies:
                columns = entry.get("columns")
                name = entry.get("objectName")
                if not isinstance(columns, list) or not isinstance(name, str):
                    continue
                for column in columns:
                    if not isinstance(column, dict) or not isinstance(column.get("policies"), list):
                        continue
                    found = tuple(
                        f"masking policy {p['policyName']}"
                        for p in column["policies"]
                        if isinstance(p, dict)
                        and p.get("policyKind") == "MASKING_POLICY"
                        and isinstance(p.get("policyName"), str)
                        and p["policyName"].upper() not in self.c.unmasking_policies
                    )
                    if found:
                        key = (name.upper(), str(column.get("columnName")).upper())
                        self._policies[key] = found
        return self._policies

    def _source_column(self, source: dict[str, Any], where: str) -> str | None:
        """The column urn of a directSources / baseSources entry naming a table-like object."""
        asset = self._table(self._text(source, "objectName", where), where)
        self._asset(asset, "Table", {"domain": source["objectDomain"]})
        return self._column(asset, self._text(source, "columnName", where), self.r.at)

    def _view_column(self, direct: dict[str, bool], base: Any, where: str) -> None:
        """A column written from exactly one view column teaches that view column its
        upstreams: the baseSources it did not read directly. With several view columns among
        the direct sources the base sources cannot be told apart, and nothing is learnt."""
        views = [urn for urn, is_view in direct.items() if is_view]
        if len(views) != 1 or not isinstance(base, list):
            return
        for source in base:
            if self._domain(source, f"baseSources of {where}") not in TABLE_DOMAINS:
                continue
            upstream = self._source_column(source, where)
            if upstream is not None and upstream not in direct:
                self.out.append(ColumnFeed(upstream, views[0], self.r.at))
                self.c.counts["view_column_pairs"] += 1

    def _copied_column(
        self, target: str, name: str, copied: tuple[list[str], bool], via: str
    ) -> None:
        """Feed a COPY's target column from the same-named column of each dataset it read,
        when the graph knows exactly one such column there."""
        datasets, case_sensitive = copied
        for dataset in datasets:
            same = [
                known
                for known in self.c.dataset_columns(dataset)
                if (known == name if case_sensitive else known.upper() == name.upper())
            ]
            if len(same) != 1:
                self.c.counts["copy_columns_unmatched"] += 1
                continue
            source = self._column(dataset, same[0], self.r.at)
            if source is not None:
                self.out.append(ColumnFeed(source, target, self.r.at, via))
                self.c.counts["copy_column_pairs"] += 1

    def _column(self, asset: str, name: str, at: int) -> str | None:
        try:
            urn = self.c.column_urn(asset, name)
        except IdentityError:
            self.c.counts["columns_skipped"] += 1
            return None
        self.out.append(Column(urn, asset, name, at))
        return urn

    def _view_upstreams(self, direct: list[tuple[str, dict[str, Any]]]) -> None:
        """A read through exactly one view teaches that view's upstreams: the base objects
        the query did not read directly (or all of them, when it read those directly too)."""
        views = _distinct(
            urn for urn, entry in direct if _lower(entry.get("objectDomain")) in VIEW_DOMAINS
        )
        unlisted = [v for v in views if v not in self.c.views_with_dependencies]
        if not unlisted:
            return
        if len(views) > 1:
            self.c.counts["view_reads_ambiguous"] += 1
            return
        view = unlisted[0]
        base = [u for u, _ in self._objects(self.r.base, "BASE_OBJECTS_ACCESSED") if u != view]
        read_directly = {urn for urn, _ in direct}
        upstreams = [u for u in _distinct(base) if u not in read_directly] or _distinct(base)
        for upstream in upstreams:
            self.out.append(Flow(upstream, view, self.r.at))
        self.c.counts["view_upstreams_from_base"] += len(upstreams)

    def _ddl(self) -> None:
        ddl = self.r.ddl
        if not ddl:
            return
        domain = self._domain(ddl, "OBJECT_MODIFIED_BY_DDL")
        if domain not in TABLE_DOMAINS:
            return
        urn = self._table(self._text(ddl, "objectName", "OBJECT_MODIFIED_BY_DDL"), "DDL")
        if str(ddl.get("operationType") or "").upper() == "DROP":
            self.out.append(SoftDelete(urn, self.r.at))
            self.c.counts["drops"] += 1
        else:  # CREATE, ALTER, UNDROP...: the object exists at this time
            self._asset(urn, "Table", {"domain": ddl["objectDomain"]})

    # --- helpers ----------------------------------------------------------------------------

    def _job_name(self, urns: list[str], *, writes: bool) -> str:
        verb = (self.r.query_type or ("write" if writes else "read")).lower()
        names = [self.c.system_and_name(u)[1] for u in urns[:3]]
        return f"{verb} {', '.join(names)}" + (" ..." if len(urns) > 3 else "")

    def _table(self, name: str, where: str) -> str:
        try:
            return self.c.table_urn(name)
        except IdentityError as exc:
            raise MalformedRow(self.r.query_id, f"{where}: {exc}") from None

    def _domain(self, entry: Any, where: str) -> str:
        if not isinstance(entry, dict) or not isinstance(entry.get("objectDomain"), str):
            raise MalformedRow(self.r.query_id, f"{where} has no objectDomain")
        return str(entry["objectDomain"]).lower()

    def _text(self, entry: Any, key: str, where: str) -> str:
        value = entry.get(key) if isinstance(entry, dict) else None
        if not isinstance(value, str) or not value:
            raise MalformedRow(self.r.query_id, f"{where} has no {key}")
        return value


def _lower(value: Any) -> str:
    return value.lower() if isinstance(value, str) else ""


def _distinct(urns: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(urns))
