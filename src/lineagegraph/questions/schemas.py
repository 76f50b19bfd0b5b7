"""Schemas over time: an asset's schema versions per source and the changes between them
(`lineagegraph schema-history`, the Marquez dataset versions route, the schema-change alert)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from lineagegraph.output import format_rows, human_times
from lineagegraph.schemas import Change, Version, changes, version_of

COLUMNS = [
    "changed_at", "source", "change", "added", "dropped", "retyped", "columns", "last_seen",
]  # fmt: skip


class Reads(Protocol):
    def read(self, name: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]: ...


@dataclass(frozen=True)
class SchemaHistory:
    """Each source's versions of one asset's schema, oldest first, and the changes between."""

    urn: str
    versions: dict[str, list[Version]]

    def changes(self) -> list[Change]:
        """Every source's changes, oldest first."""
        found = [c for source, vs in self.versions.items() for c in changes(source, vs)]
        return sorted(found, key=lambda c: (c.at, c.source))

    def as_dict(self) -> dict[str, Any]:
        return {
            "urn": self.urn,
            "versions": [
                {"source": s, "at": v.at, "last_seen": v.last, "hash": v.hash,
                 "fields": [{"name": n, "type": t} for n, t in v.fields]}
                for s, vs in self.versions.items()
                for v in vs
            ],
            "changes": [change_dict(c) for c in self.changes()],
        }  # fmt: skip

    def rows(self) -> list[list[Any]]:
        """A row per version, oldest first: each source's first is `first`, every later one says
        what it changed, `breaking` when it dropped or retyped a column, else `compatible`."""
        out = []
        for source, versions in self.versions.items():
            made = [None, *changes(source, versions)]
            for version, change in zip(versions, made, strict=True):
                kind = "first" if change is None else "compatible"
                kind = "breaking" if change and change.breaking else kind
                out.append([
                    version.at, source, kind,
                    ", ".join(c for c, _ in change.added) if change else "",
                    ", ".join(c for c, _ in change.dropped) if change else "",
                    ", ".join(f"{c}: {a} -> {b}" for c, a, b in change.retyped) if change else "",
                    len(version.fields), version.last,
                ])  # fmt: skip
        return sorted(out, key=lambda r: (r[0], r[1]))

    def render(self, fmt: str) -> str:
        if fmt == "json":
            return json.dumps(self.as_dict(), indent=2, ensure_ascii=False)
        rows = self.rows()
        if fmt == "table":
            if not rows:
                return f"no schema reported for {self.urn}"
            rows = human_times(COLUMNS, rows)
        return format_rows(COLUMNS, rows, fmt)


def change_dict(c: Change) -> dict[str, Any]:
    """A change as JSON: what `schema-history` and `diff` print."""
    return {
        "source": c.source, "at": c.at, "breaking": c.breaking,
        "added": [{"name": n, "type": t} for n, t in c.added],
        "dropped": [{"name": n, "type": t} for n, t in c.dropped],
        "retyped": [{"name": n, "from": a, "to": b} for n, a, b in c.retyped],
    }  # fmt: skip


def history_of(store: Reads, urn: str) -> SchemaHistory:
    """The schema versions of the asset `urn` (already resolved), by source."""
    versions: dict[str, list[Version]] = {}
    for row in store.read("schema_history", {"urn": urn}):
        versions.setdefault(row["source"], []).append(version_of(row))
    return SchemaHistory(urn, versions)


def dropped(versions: Mapping[str, Sequence[Version]]) -> dict[str, int]:
    """The columns an asset had dropped, with when, from each source's versions (oldest first)
    up to a time: a column is dropped when every source that listed it no longer does in its
    newest version (so, like an edge with several `via`, it goes when the last source drops
    it), at the latest of their drops. A column no source listed is never dropped here."""
    standing: set[str] = set()
    when: dict[str, int] = {}
    for source, held in versions.items():
        if held:
            standing.update(name for name, _ in held[-1].fields)
        for change in changes(source, held):
            for name, _ in change.dropped:
                when[name] = max(when.get(name, change.at), change.at)
    return {name: at for name, at in when.items() if name not in standing}


def dropped_columns(
    store: Reads, assets: Sequence[str], as_of: int | None = None
) -> dict[str, dict[str, int]]:
    """Per asset, the columns dropped by `as_of` (None: now) and when (`dropped`), from the
    schema versions reported by then: what the explorer's column view leaves out."""
    by_asset: dict[str, dict[str, list[Version]]] = {}
    for row in store.read("schema_versions_at", {"assets": list(assets), "as_of": as_of}):
        by_asset.setdefault(row["asset"], {}).setdefault(row["source"], []).append(version_of(row))
    return {asset: dropped(versions) for asset, versions in by_asset.items()}
