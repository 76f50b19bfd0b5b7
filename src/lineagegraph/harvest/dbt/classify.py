"""dbt `tags` and `meta` as classifications (docs/dbt.md#classifications).

Models, seeds, snapshots and sources, and their columns, carry `tags` (a list of words) and
`meta` (a mapping). A tag matching one of `[dbt] tag_keys` (globs) becomes a key without a
value; a `meta` key listed in `[dbt] meta_keys` becomes key=value, its value as text (`true`
for YAML's true; false, null, lists and mappings state nothing). On one target a `meta` key
wins over the tag of the same name: it says more.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING, Any

from lineagegraph import identity
from lineagegraph.model import Column, TagFact

if TYPE_CHECKING:
    from lineagegraph.harvest.dbt.project import Project

SOURCE = "dbt"


def classifications(
    project: Project, tag_keys: Sequence[str], meta_keys: Sequence[str]
) -> tuple[list[Column], list[TagFact]]:
    """The columns that column tags land on, and every classification the manifest states."""
    columns: list[Column] = []
    facts: dict[tuple[str, str], TagFact] = {}
    by = str(project.artifacts.manifest["metadata"].get("invocation_id") or "")
    wanted = {key.lower() for key in meta_keys}
    for unique_id, urn in project.urns.items():
        node = project.nodes[unique_id]
        meta = {**_mapping(node.get("source_meta")), **_mapping(node.get("meta"))}
        meta.update(_mapping((node.get("config") or {}).get("meta")))
        for key, value, why in _stated(node.get("tags"), meta, tag_keys, wanted):
            reason = f"dbt {why} on {unique_id}"
            facts[urn, key] = TagFact(urn, key, value, SOURCE, by, project.at, reason)
        own = {c.lower(): c for c in project.columns(unique_id)}
        declared = node.get("columns")
        for name, spec in (declared if isinstance(declared, dict) else {}).items():
            if not isinstance(spec, dict):
                continue
            config = spec.get("config") if isinstance(spec.get("config"), dict) else {}
            tags = [*_words(spec.get("tags")), *_words(config.get("tags"))]
            meta = {**_mapping(spec.get("meta")), **_mapping(config.get("meta"))}
            stated = list(_stated(tags, meta, tag_keys, wanted))
            if not stated:
                continue
            column = project.naming.column(
                str(spec.get("name") or name), quoted=bool(spec.get("quote"))
            )
            column = own.get(column.lower(), column)
            try:
                target = identity.column_urn(urn, column)
            except identity.IdentityError as exc:
                project.report.problems.append(f"{unique_id}: column tags skipped: {exc}")
                continue
            columns.append(Column(target, urn, column, project.at))
            for key, value, why in stated:
                reason = f"dbt {why} on {unique_id} column {column}"
                facts[target, key] = TagFact(target, key, value, SOURCE, by, project.at, reason)
    return columns, list(facts.values())


def _stated(
    tags: Any, meta: Mapping[str, Any], tag_keys: Sequence[str], meta_keys: set[str]
) -> Iterator[tuple[str, str | None, str]]:
    """(key, value, what stated it): tags first, so a meta key of the same name wins."""
    for tag in dict.fromkeys(_words(tags)):
        if any(fnmatchcase(tag, pattern) for pattern in tag_keys):
            yield tag, None, f"tag {tag!r}"
    for key, value in meta.items():
        if key.lower() not in meta_keys:
            continue
        text = _text(value)
        if text is not None:
            yield key, text, f"meta {key}: {text}"


def _text(value: Any) -> str | None:
    if value is True:
        return "true"
    if isinstance(value, str) and value:
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return None  # false, null, lists, mappings: nothing stated


def _words(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    return [v for v in value if isinstance(v, str) and v] if isinstance(value, list) else []


def _mapping(value: Any) -> dict[str, Any]:
    return {str(k): v for k, v in value.items()} if isinstance(value, dict) else {}
