"""Reading dbt's artifacts (manifest.json, catalog.json, run_results.json) from a target path.

Only the manifest is required; its schema version is checked first, so an artifact this
module does not know fails with a message naming the file and the versions it reads.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from lineagegraph.errors import HarvestError

# dbt 1.6 writes v10, 1.7 v11, 1.8 and later v12 (https://schemas.getdbt.com).
MANIFEST_VERSIONS = range(10, 13)
_VERSION = re.compile(r"/manifest/v(\d+)\.json$")


class ArtifactError(HarvestError):
    """A dbt artifact that is missing, unreadable or of a version this module does not read."""


@dataclass(frozen=True)
class Artifacts:
    """The artifacts of one dbt target directory; catalog and run results when present."""

    target: Path
    manifest: dict[str, Any]
    catalog: dict[str, Any] | None
    run_results: dict[str, Any] | None

    @property
    def adapter(self) -> str:
        return str(self.manifest["metadata"].get("adapter_type") or "").lower()

    @property
    def project(self) -> str:
        return str(self.manifest["metadata"].get("project_name") or "dbt")

    @property
    def generated_ms(self) -> int:
        return iso_ms(self.manifest["metadata"].get("generated_at"), self.target / "manifest.json")

    @property
    def catalog_ms(self) -> int:
        """When the catalog was read from the warehouse (its schemas' time), else the
        manifest's time."""
        metadata = (self.catalog or {}).get("metadata")
        at = metadata.get("generated_at") if isinstance(metadata, dict) else None
        return self.generated_ms if at is None else iso_ms(at, self.target / "catalog.json")


def load(target: Path) -> Artifacts:
    """Read a target directory (or a manifest.json path); the manifest must be there."""
    directory = target.parent if target.name == "manifest.json" else target
    manifest = _read(directory / "manifest.json", required=True)
    assert manifest is not None
    manifest_version(manifest, directory / "manifest.json")
    return Artifacts(
        directory,
        manifest,
        _read(directory / "catalog.json", required=False),
        _read(directory / "run_results.json", required=False),
    )


def manifest_version(manifest: Any, where: Path) -> int:
    """The manifest's schema version, if it is one this module reads."""
    metadata = manifest.get("metadata") if isinstance(manifest, dict) else None
    url = metadata.get("dbt_schema_version") if isinstance(metadata, dict) else None
    match = _VERSION.search(url) if isinstance(url, str) else None
    if match is None:
        raise ArtifactError(f"{where}: not a dbt manifest (no metadata.dbt_schema_version)")
    version = int(match.group(1))
    if version not in MANIFEST_VERSIONS:
        age = "too old" if version < MANIFEST_VERSIONS.start else "newer than this lineagegraph"
        raise ArtifactError(
            f"{where}: manifest schema v{version} is {age}; lineagegraph reads "
            f"v{MANIFEST_VERSIONS.start}-v{MANIFEST_VERSIONS.stop - 1} (dbt 1.6 and later)"
        )
    for key in ("nodes", "sources"):
        section = manifest.get(key)
        if not isinstance(section, dict):
            raise ArtifactError(f"{where}: manifest has no {key!r} object")
        bad = next((k for k, node in section.items() if not isinstance(node, dict)), None)
        if bad is not None:
            raise ArtifactError(f"{where}: {key}[{bad!r}] is not an object")
    return version


# The node fields lineagegraph reads and the JSON types dbt's schema gives them (None: absent
# or null is fine too). A node with another type is skipped, not read halfway.
_TEXT_FIELDS = (
    "resource_type",
    "name",
    "alias",
    "identifier",
    "database",
    "schema",
    "relation_name",
    "compiled_code",
    "attached_node",
    "column_name",
)
_OBJECT_FIELDS = ("config", "depends_on", "columns")
_JSON_TYPES = {str: "a string", dict: "an object", list: "an array", bool: "a boolean"}


def node_defect(node: dict[str, Any]) -> str | None:
    """Why a manifest node cannot be read (a field of the wrong type), or None if it can."""
    for key in _TEXT_FIELDS:
        if (problem := _not_a(str, node.get(key), key)) is not None:
            return problem
    for key in _OBJECT_FIELDS:
        if (problem := _not_a(dict, node.get(key), key)) is not None:
            return problem
    config = node.get("config") or {}
    depends = node.get("depends_on") or {}
    checks = [
        _not_a(str, config.get("materialized"), "config.materialized"),
        _not_a(list, depends.get("nodes"), "depends_on.nodes"),
    ]
    checks += [
        _not_a(str, parent, f"depends_on.nodes[{i}]")
        for i, parent in enumerate(depends.get("nodes") or [])
    ]
    for name, column in (node.get("columns") or {}).items():
        checks.append(_not_a(dict, column, f"columns[{name!r}]"))
        if isinstance(column, dict):
            checks.append(_not_a(str, column.get("name"), f"columns[{name!r}].name"))
            checks.append(_not_a(bool, column.get("quote"), f"columns[{name!r}].quote"))
    return next((problem for problem in checks if problem is not None), None)


def catalog_defect(entry: Any) -> str | None:
    """Why a catalog entry's columns cannot be read, or None if they can (or it lists none)."""
    if not isinstance(entry, dict):
        return _not_a(dict, entry, "the entry")
    columns = entry.get("columns")
    if not isinstance(columns, dict):
        return _not_a(dict, columns, "columns")  # None (no columns listed) is fine
    for name, column in columns.items():
        if not isinstance(column, dict):
            return _not_a(dict, column, f"columns[{name!r}]")
        if not column.get("name") or not isinstance(column["name"], str):
            return _not_a(str, column.get("name"), f"columns[{name!r}].name") or (
                f"columns[{name!r}] has no name"
            )
        if (problem := _not_a(int, column.get("index"), f"columns[{name!r}].index")) is not None:
            return problem
    return None


def _not_a(kind: type, value: Any, key: str) -> str | None:
    """`key` is not of `kind` (None is fine): the sentence saying so."""
    if value is None or (isinstance(value, kind) and not (kind is int and isinstance(value, bool))):
        return None
    found = _JSON_TYPES.get(type(value), f"a {type(value).__name__}")
    if isinstance(value, int | float) and not isinstance(value, bool):
        found = "a number"
    return f"{key} is {found}, not {_JSON_TYPES.get(kind, 'a number')}"


def _read(path: Path, *, required: bool) -> dict[str, Any] | None:
    if not path.is_file():
        if required:
            raise ArtifactError(
                f"no dbt manifest at {str(path)!r}: run `dbt parse` (or any dbt command) in the "
                "project, or point --target-path at its target directory"
            )
        return None
    try:
        with path.open("rb") as fh:
            value = json.load(fh)
    except (OSError, ValueError) as exc:
        raise ArtifactError(f"{path}: unreadable dbt artifact: {exc}") from None
    if not isinstance(value, dict):
        raise ArtifactError(f"{path}: a dbt artifact is a JSON object")
    return value


def iso_ms(text: Any, where: Path | str) -> int:
    """dbt's ISO 8601 UTC times (`...Z`) to epoch milliseconds."""
    try:
        moment = datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    except ValueError:
        raise ArtifactError(f"{where}: {text!r} is not an ISO 8601 time") from None
    if moment.tzinfo is None:
        raise ArtifactError(f"{where}: {text!r} has no time zone")
    return int(moment.timestamp() * 1000)
