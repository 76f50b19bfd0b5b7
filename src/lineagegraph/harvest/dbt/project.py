"""A dbt manifest (with its catalog and run results) as graph values: pure, no store.

Models, seeds, snapshots and sources are `:Table` assets; each model or snapshot is a
`:Transformation` (system `dbt`) reading its upstream relations and writing its own, with a
FLOWS_TO per upstream. Disabled nodes are not in the manifest's `nodes` and are skipped, as
dbt skips them; an ephemeral model is no relation, so its dependents read what it reads (the
compiled SQL inlines it as a CTE, so column lineage passes through it too).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from lineagegraph import identity
from lineagegraph.harvest.dbt.artifacts import Artifacts, catalog_defect, iso_ms, node_defect
from lineagegraph.harvest.dbt.checks import check_results
from lineagegraph.harvest.dbt.columns import (
    ColumnLineageError,
    RelationKey,
    column_lineage,
    relation_key,
)
from lineagegraph.harvest.dbt.naming import Naming
from lineagegraph.masking import DEFAULT_NAMES
from lineagegraph.model import (
    Asset,
    CheckResult,
    Column,
    ColumnFeed,
    Flow,
    Item,
    Scalar,
    Transformation,
)
from lineagegraph.schemas import Fields, SchemaSeen

SYSTEM = "dbt"
RELATIONS = ("model", "seed", "snapshot")  # node types that are tables (unless ephemeral)
BUILT = ("model", "snapshot")  # node types built from SQL: transformations


@dataclass
class DbtCounts:
    """What one manifest held and what became of it."""

    counts: dict[str, int] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    def add(self, name: str, n: int = 1) -> None:
        self.counts[name] = self.counts.get(name, 0) + n


class Project:
    """The relations of one manifest, their urns and columns, ready to turn into values."""

    def __init__(
        self,
        artifacts: Artifacts,
        naming: Naming,
        *,
        column_lineage: bool = True,
        masking: frozenset[str] = DEFAULT_NAMES,
    ):
        self.artifacts = artifacts
        self.naming = naming
        self.column_lineage = column_lineage and naming.dialect is not None
        self.masking = masking
        self.report = DbtCounts()
        self.at = artifacts.generated_ms
        self.column_runs: dict[str, int] = {}
        """Each transformation whose column lineage `items` worked out, and its run's time: only
        those runs say which columns a model no longer derives (FEEDS drift, docs/history.md)."""
        manifest = artifacts.manifest
        self.nodes: dict[str, dict[str, Any]] = self._readable(
            {**manifest["sources"], **manifest["nodes"]}
        )
        self.urns: dict[str, str] = {}  # unique_id -> urn, for every relation
        self.ephemeral: set[str] = set()
        self._columns: dict[str, list[str]] = {}
        self._schemas: dict[str, Fields] = {}  # unique_id -> the catalog's (column, type)
        for unique_id, node in self.nodes.items():
            kind = node.get("resource_type")
            if kind == "source" or kind in RELATIONS:
                if (node.get("config") or {}).get("materialized") == "ephemeral":
                    self.ephemeral.add(unique_id)
                    continue
                try:
                    self.urns[unique_id] = naming.relation_urn(node)
                except identity.IdentityError as exc:
                    self.report.problems.append(f"{unique_id}: skipped: {exc}")
        self.report.add("ephemeral", len(self.ephemeral))
        self.report.add("disabled", sum(len(v) for v in (manifest.get("disabled") or {}).values()))
        self._runs = self._model_runs()

    def _readable(self, nodes: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        """The nodes whose fields have the types dbt writes; each other one is skipped,
        counted and reported by unique_id, so one bad node does not stop the harvest."""
        where = self.artifacts.target / "manifest.json"
        readable: dict[str, dict[str, Any]] = {}
        for unique_id, node in nodes.items():
            defect = node_defect(node)
            if defect is None:
                readable[unique_id] = node
            else:
                self.report.add("skipped_bad_nodes")
                self.report.problems.append(f"{where}: {unique_id}: skipped: {defect}")
        return readable

    def urn(self, unique_id: str) -> str | None:
        return self.urns.get(unique_id)

    def upstream(self, unique_id: str) -> list[str]:
        """The relations a node reads, looking through ephemeral models (dbt inlines them)."""
        found: list[str] = []
        seen: set[str] = set()
        stack = list(reversed((self.nodes[unique_id].get("depends_on") or {}).get("nodes") or []))
        while stack:
            parent = stack.pop()
            if parent in seen:
                continue
            seen.add(parent)
            if parent in self.ephemeral:
                deps = (self.nodes[parent].get("depends_on") or {}).get("nodes") or []
                stack.extend(reversed(deps))
            elif parent in self.urns:
                found.append(parent)
        return found

    def columns(self, unique_id: str) -> list[str]:
        """A relation's columns as the warehouse stores them: the catalog's, else the YAML's."""
        known = self._columns.get(unique_id)
        if known is None:
            known = self._columns[unique_id] = self._read_columns(unique_id)
        return known

    def _read_columns(self, unique_id: str) -> list[str]:
        catalog = self.artifacts.catalog or {}
        section = "sources" if unique_id.startswith("source.") else "nodes"
        entries = catalog.get(section)
        entry = entries.get(unique_id) if isinstance(entries, dict) else None
        defect = catalog_defect(entry) if entry is not None else None
        if defect is None and entry and entry.get("columns"):
            by_index = sorted(entry["columns"].values(), key=lambda c: c.get("index") or 0)
            self._schemas[unique_id] = tuple(
                (c["name"], c["type"] if isinstance(c.get("type"), str) else None) for c in by_index
            )
            return [c["name"] for c in by_index]
        if defect is not None:
            self.report.add("skipped_bad_catalog_entries")
            self.report.problems.append(
                f"{self.artifacts.target / 'catalog.json'}: {unique_id}: columns not read "
                f"({defect}); the manifest's are used"
            )
        declared = self.nodes[unique_id].get("columns") or {}
        return [
            self.naming.column(str(c.get("name") or k), quoted=bool(c.get("quote")))
            for k, c in declared.items()
        ]

    def items(self) -> Iterator[Item | SchemaSeen]:
        """Every asset, its columns and its schema as the catalog read it (at the catalog's
        time) first, then transformations, flows and column feeds."""
        for unique_id, urn in self.urns.items():
            node = self.nodes[unique_id]
            kind = str(node.get("resource_type"))
            self.report.add(kind + "s")
            yield Asset(
                urn,
                "Table",
                identity.system_of(urn),
                identity.name_of(urn),
                self.at,
                _props(unique_id, node),
            )
            for name in self.columns(unique_id):
                try:
                    column = identity.column_urn(urn, name)
                except identity.IdentityError as exc:
                    self.report.problems.append(f"{unique_id}: column skipped: {exc}")
                    continue
                self.report.add("columns")
                yield Column(column, urn, name, self.at)
            if unique_id in self._schemas:
                yield SchemaSeen(urn, SYSTEM, self.artifacts.catalog_ms, self._schemas[unique_id])
        for unique_id, urn in self.urns.items():
            if self.nodes[unique_id].get("resource_type") in BUILT:
                yield from self._built(unique_id, urn)

    def _built(self, unique_id: str, urn: str) -> Iterator[Item]:
        node = self.nodes[unique_id]
        reads = [self.urns[u] for u in self.upstream(unique_id)]
        job = identity.dbt_transformation_urn(self.artifacts.project, unique_id)
        run_id, run_at = self._runs.get(unique_id, (self._invocation, self.at))
        yield Transformation(
            job,
            SYSTEM,
            str(node.get("name") or unique_id),
            run_id,
            run_at,
            None,
            tuple(reads),
            (urn,),
        )
        for source in reads:
            yield Flow(source, urn, run_at, job)
        if self.column_lineage:
            yield from self._column_feeds(unique_id, urn, run_at, job)

    def _column_feeds(self, unique_id: str, urn: str, at: int, job: str) -> Iterator[Item]:
        sql = self.nodes[unique_id].get("compiled_code")
        if not sql:
            self.report.add("models_without_compiled_sql")
            return
        upstream: dict[RelationKey, tuple[str, dict[str, str]]] = {}
        for parent in self.upstream(unique_id):
            node = self.nodes[parent]
            table = node.get("alias") or node.get("identifier") or node.get("name")
            key = relation_key(node.get("database"), node.get("schema"), str(table))
            upstream[key] = (self.urns[parent], {c.lower(): c for c in self.columns(parent)})
        try:
            sources, masks = column_lineage(
                sql,
                self.naming.dialect,
                {k: list(cols.values()) for k, (_, cols) in upstream.items()},
                self.masking,
            )
        except ColumnLineageError as exc:
            self.report.add("models_sql_unreadable")
            self.report.problems.append(f"{unique_id}: no column lineage: {exc}")
            return
        self.column_runs[job] = at
        own = {c.lower(): c for c in self.columns(unique_id)}
        for column, pairs in sources.items():
            try:
                masked = masks.get(column, {})
                yield from self._feeds(urn, own, column, pairs, masked, upstream, at, job)
            except identity.IdentityError as exc:
                self.report.problems.append(f"{unique_id}: column lineage skipped: {exc}")

    def _feeds(
        self,
        urn: str,
        own: dict[str, str],
        column: str,
        pairs: list[tuple[RelationKey, str]],
        masked: dict[tuple[RelationKey, str], tuple[str, ...]],
        upstream: dict[RelationKey, tuple[str, dict[str, str]]],
        at: int,
        job: str,
    ) -> Iterator[Item]:
        """One output column's FEEDS, from the upstream columns the SQL made it of."""
        name = own.get(column.lower(), column)
        dst = identity.column_urn(urn, name)
        if column.lower() not in own and pairs:  # a column the catalog or YAML did not list
            yield Column(dst, urn, name, self.at)
        for key, source_column in pairs:
            parent = upstream.get(key)
            if parent is None:
                continue  # a relation the manifest does not name (a hard-coded table)
            src_name = parent[1].get(source_column.lower(), source_column)
            src = identity.column_urn(parent[0], src_name)
            if source_column.lower() not in parent[1]:
                yield Column(src, parent[0], src_name, self.at)
            self.report.add("column_feeds")
            masked_by = masked.get((key, source_column), ())
            if masked_by:
                self.report.add("column_feeds_masked")
            yield ColumnFeed(src, dst, at, job, masked_by)

    @property
    def _invocation(self) -> str:
        return str(self.artifacts.manifest["metadata"].get("invocation_id") or "")

    def _model_runs(self) -> dict[str, tuple[str, int]]:
        """When each model was last built: its successful result in run_results.json."""
        results = self.artifacts.run_results or {}
        metadata = results.get("metadata") or {}
        where = self.artifacts.target / "run_results.json"
        runs: dict[str, tuple[str, int]] = {}
        for result in results.get("results") or []:
            if result.get("status") != "success":
                continue
            done = [t for t in result.get("timing") or [] if t.get("name") == "execute"]
            at = iso_ms(done[0]["completed_at"], where) if done else self.at
            runs[str(result.get("unique_id"))] = (str(metadata.get("invocation_id") or ""), at)
        return runs

    def checks(self) -> list[CheckResult]:
        """The run's test results, on the urns this project's relations have."""
        found = list(
            check_results(
                self.artifacts, self.nodes, self.urn, self._stored_column, self.report.problems
            )
        )
        self.report.add("tests", len(found))
        return found

    def _stored_column(self, unique_id: str, name: str) -> str:
        """A YAML column name as the relation stores it (the catalog's spelling when listed)."""
        stored = {c.lower(): c for c in self.columns(unique_id)}
        return stored.get(name.lower(), self.naming.column(name))


def _props(unique_id: str, node: dict[str, Any]) -> dict[str, Scalar]:
    props: dict[str, Scalar] = {"dbt_unique_id": unique_id}
    materialized = (node.get("config") or {}).get("materialized")
    if materialized and node.get("resource_type") != "source":
        props["dbt_materialized"] = str(materialized)
    return props
