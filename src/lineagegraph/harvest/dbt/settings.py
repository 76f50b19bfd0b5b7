"""[dbt]: the dbt harvester's section (docs/settings.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import Field, field_validator

from lineagegraph.settings_base import Section

# `meta` keys that state a classification unless [dbt] meta_keys says otherwise.
DEFAULT_META_KEYS = ("pii", "contains_pii", "classification", "sensitivity")


class DbtSettings(Section):
    """`harvest dbt`: where a dbt project's artifacts are and how its relations are named."""

    target_path: Path | None = Field(
        None,
        description="The dbt project's target directory (manifest.json, and catalog.json and "
        "run_results.json when there); unset = dbt is not harvested by `harvest all`.",
    )
    namespace: str | None = Field(
        None,
        description="OpenLineage namespace of a non-Snowflake warehouse, e.g. "
        "postgres://db.example.com:5432, databricks://adb-1.azuredatabricks.net, "
        "duckdb:///data/dev.duckdb (BigQuery needs none). Snowflake projects use "
        "[identity] snowflake_account.",
    )
    column_lineage: bool = Field(
        True, description="Derive column lineage from each model's compiled SQL (sqlglot)."
    )
    tag_keys: list[str] = Field(
        default_factory=lambda: ["*"],
        description="dbt tags (on models, seeds, snapshots, sources and their columns) that "
        "become classification keys, as globs: ['pii*', 'restricted']; [] = none.",
    )
    meta_keys: list[str] = Field(
        default_factory=lambda: list(DEFAULT_META_KEYS),
        description="`meta` keys that become classifications key=value, in any case "
        "(meta: {contains_pii: true} states contains_pii=true).",
    )

    @field_validator("target_path", "namespace", mode="before")
    @classmethod
    def _empty_is_unset(cls, value: Any) -> Any:
        return None if value == "" else value
