"""The urn of a dbt relation and the names of its columns, per adapter.

On Snowflake a relation's urn must be the one ACCESS_HISTORY gives the same table, so it is
read from the manifest's `relation_name`, which dbt writes quoted as the project's quoting
config says: unquoted parts are upper-cased (Snowflake stores them so), quoted ones keep their
case. Other adapters get OpenLineage's dataset naming: the warehouse's namespace (postgres://
host:port, databricks://host, duckdb://path, bigquery) and `{database}.{schema}.{table}`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lineagegraph import identity
from lineagegraph.errors import ConfigError

# OpenLineage namespaces whose every dataset is in one place need no setting.
FIXED_NAMESPACES = {"bigquery": "bigquery"}
# sqlglot dialect names of the adapters whose compiled SQL is read for column lineage.
DIALECTS = {
    "snowflake": "snowflake",
    "duckdb": "duckdb",
    "postgres": "postgres",
    "redshift": "redshift",
    "bigquery": "bigquery",
    "databricks": "databricks",
    "spark": "spark",
    "trino": "trino",
}


@dataclass(frozen=True)
class Naming:
    """How one manifest's relations are named: Snowflake's account, or another namespace."""

    adapter: str
    snowflake_account: str | None = None
    namespace: str | None = None

    @classmethod
    def of(cls, adapter: str, snowflake_account: str | None, namespace: str | None) -> Naming:
        """The naming for a manifest of `adapter`; ConfigError names the missing setting."""
        if adapter == "snowflake":
            if namespace and namespace.lower().startswith("snowflake://"):
                snowflake_account = namespace[len("snowflake://") :].strip("/")
            if not snowflake_account:
                raise ConfigError(
                    "a Snowflake dbt project needs the account its urns name: set [identity] "
                    "snowflake_account (LINEAGEGRAPH_IDENTITY__SNOWFLAKE_ACCOUNT)"
                )
            return cls(adapter, snowflake_account=snowflake_account)
        namespace = namespace or FIXED_NAMESPACES.get(adapter)
        if not namespace:
            raise ConfigError(
                f"a {adapter or 'dbt'} project needs its warehouse's OpenLineage namespace: set "
                "[dbt] namespace (LINEAGEGRAPH_DBT__NAMESPACE), e.g. postgres://db.example.com:"
                "5432, databricks://adb-123.azuredatabricks.net or duckdb:///data/dev.duckdb"
            )
        return cls(adapter, namespace=namespace)

    @property
    def dialect(self) -> str | None:
        return DIALECTS.get(self.adapter)

    def relation_urn(self, node: dict[str, Any]) -> str:
        """The urn of a model, seed, snapshot or source (not of an ephemeral model)."""
        table = node.get("alias") or node.get("identifier") or node.get("name")
        parts = [p for p in (node.get("database"), node.get("schema"), table) if p]
        if self.snowflake_account is not None:
            text = node.get("relation_name") or ".".join(parts)
            return identity.snowflake_urn(self.snowflake_account, text)
        assert self.namespace is not None
        return identity.warehouse_table_urn(self.namespace, parts)

    def column(self, name: str, *, quoted: bool = False, stored: bool = False) -> str:
        """A column's name as the warehouse stores it: on Snowflake an unquoted name typed in
        YAML is upper-cased; names from the catalog (`stored`) are used as they are."""
        if self.snowflake_account is not None and not (quoted or stored):
            return name.upper()
        return name
