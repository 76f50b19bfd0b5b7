"""SNOWFLAKE.ACCOUNT_USAGE as Snowflake documents it, for stand-in servers (fakesnow).

The demo fills these views through the real connector, and so do the Snowflake harvester's
tests: ACCESS_HISTORY's VARIANT entries (direct and base objects, modified objects with
per-column sources, stages by name, DDL), QUERY_HISTORY rows, OBJECT_DEPENDENCIES,
TAG_REFERENCES and COLUMNS.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from snowflake.connector import SnowflakeConnection

# Columns of the three ACCOUNT_USAGE views as documented (ACCESS_HISTORY in full; the other two
# with the columns the harvester reads and a few neighbours), with Snowflake's types.
ACCESS_HISTORY_DDL = """
CREATE OR REPLACE TABLE SNOWFLAKE.ACCOUNT_USAGE.ACCESS_HISTORY (
    query_id VARCHAR, query_start_time TIMESTAMP_LTZ, user_name VARCHAR,
    direct_objects_accessed ARRAY, base_objects_accessed ARRAY, objects_modified ARRAY,
    object_modified_by_ddl OBJECT, policies_referenced ARRAY, parent_query_id VARCHAR,
    root_query_id VARCHAR)
"""
QUERY_HISTORY_DDL = """
CREATE OR REPLACE TABLE SNOWFLAKE.ACCOUNT_USAGE.QUERY_HISTORY (
    query_id VARCHAR, query_text VARCHAR, database_name VARCHAR, schema_name VARCHAR,
    query_type VARCHAR, user_name VARCHAR, role_name VARCHAR, warehouse_name VARCHAR,
    execution_status VARCHAR, start_time TIMESTAMP_LTZ, end_time TIMESTAMP_LTZ,
    query_hash VARCHAR, query_parameterized_hash VARCHAR)
"""
OBJECT_DEPENDENCIES_DDL = """
CREATE OR REPLACE TABLE SNOWFLAKE.ACCOUNT_USAGE.OBJECT_DEPENDENCIES (
    referenced_database VARCHAR, referenced_schema VARCHAR, referenced_object_name VARCHAR,
    referenced_object_id NUMBER, referenced_object_domain VARCHAR,
    referencing_database VARCHAR, referencing_schema VARCHAR, referencing_object_name VARCHAR,
    referencing_object_id NUMBER, referencing_object_domain VARCHAR, dependency_type VARCHAR)
"""
TAG_REFERENCES_DDL = """
CREATE OR REPLACE TABLE SNOWFLAKE.ACCOUNT_USAGE.TAG_REFERENCES (
    tag_database VARCHAR, tag_schema VARCHAR, tag_id NUMBER, tag_name VARCHAR,
    tag_value VARCHAR, object_database VARCHAR, object_schema VARCHAR, object_id NUMBER,
    object_name VARCHAR, object_deleted TIMESTAMP_LTZ, domain VARCHAR, column_id NUMBER,
    column_name VARCHAR, apply_method VARCHAR)
"""
COLUMNS_DDL = """
CREATE OR REPLACE TABLE SNOWFLAKE.ACCOUNT_USAGE.COLUMNS (
    column_id NUMBER, column_name VARCHAR, table_id NUMBER, table_name VARCHAR,
    table_schema_id NUMBER, table_schema VARCHAR, table_catalog_id NUMBER,
    table_catalog VARCHAR, ordinal_position NUMBER, is_nullable VARCHAR, data_type VARCHAR,
    character_maximum_length NUMBER, numeric_precision NUMBER, numeric_scale NUMBER,
    comment VARCHAR, deleted TIMESTAMP_LTZ)
"""
VIEWS = {
    "ACCESS_HISTORY": ACCESS_HISTORY_DDL,
    "QUERY_HISTORY": QUERY_HISTORY_DDL,
    "OBJECT_DEPENDENCIES": OBJECT_DEPENDENCIES_DDL,
    "TAG_REFERENCES": TAG_REFERENCES_DDL,
    "COLUMNS": COLUMNS_DDL,
}


def object_id(name: str) -> int:
    """A stable objectId per name, as Snowflake gives one per object."""
    return zlib.crc32(name.encode()) % 1_000_000


# --- entries of the VARIANT columns, as documented ----------------------------------------


def accessed(name: str, *columns: str, domain: str = "Table") -> dict[str, Any]:
    """An entry of direct_objects_accessed / base_objects_accessed."""
    return {
        "objectDomain": domain,
        "objectName": name,
        "objectId": object_id(name),
        "columns": [{"columnId": object_id(f"{name}.{c}"), "columnName": c} for c in columns],
    }


def modified(
    name: str,
    columns: dict[str, Sequence[tuple[str, str]]] | None = None,
    *,
    domain: str = "Table",
    base: dict[str, Sequence[tuple[str, str]]] | None = None,
) -> dict[str, Any]:
    """An entry of objects_modified; `columns` maps a column to its direct sources
    (object name, column name); baseSources default to the direct ones."""
    columns = columns or {}
    base = base if base is not None else columns

    def sources(pairs: Sequence[tuple[str, str]]) -> list[dict[str, Any]]:
        return [
            {
                "columnName": col,
                "objectDomain": "Table",
                "objectId": object_id(obj),
                "objectName": obj,
            }
            for obj, col in pairs
        ]

    return {
        "objectDomain": domain,
        "objectName": name,
        "objectId": object_id(name),
        "columns": [
            {
                "columnId": object_id(f"{name}.{col}"),
                "columnName": col,
                "directSources": sources(direct),
                "baseSources": sources(base.get(col, [])),
            }
            for col, direct in columns.items()
        ],
    }


def masked_by_policy(name: str, policies: dict[str, str]) -> dict[str, Any]:
    """An entry of policies_referenced: the masking policy (DB.SCHEMA.NAME) each of the
    object's columns was read through, nested under the column as documented."""
    return {
        "objectDomain": "Table",
        "objectName": name,
        "objectId": object_id(name),
        "columns": [
            {
                "columnId": object_id(f"{name}.{col}"),
                "columnName": col,
                "policies": [
                    {"policyName": p, "policyId": object_id(p), "policyKind": "MASKING_POLICY"}
                ],
            }
            for col, p in policies.items()
        ],
    }


def stage(name: str, kind: str = "External Named") -> dict[str, Any]:
    """A stage entry as ACCESS_HISTORY writes it: by name only, no URL (the URL is resolved
    separately, from the stage itself)."""
    return {
        "objectDomain": "Stage",
        "objectName": name,
        "objectId": object_id(name),
        "stageKind": kind,
    }


def ddl(name: str, operation: str, domain: str = "Table") -> dict[str, Any]:
    """object_modified_by_ddl: one object, its operation and properties."""
    return {
        "objectDomain": domain,
        "objectName": name,
        "objectId": object_id(name),
        "operationType": operation,
        "properties": {},
    }


@dataclass
class Query:
    """One query: its ACCESS_HISTORY row and (unless `in_query_history` is False) its
    QUERY_HISTORY row."""

    query_id: str
    at: int
    direct: list[dict[str, Any]] = field(default_factory=list)
    modified: list[dict[str, Any]] = field(default_factory=list)
    base: list[dict[str, Any]] | None = None
    ddl: dict[str, Any] | None = None
    text: str = "SELECT 1"
    query_type: str = "SELECT"
    parameterized_hash: str | None = None
    database: str | None = "RAW"
    schema: str | None = "PUBLIC"
    user: str = "ETL_USER"
    in_query_history: bool = True
    policies: list[dict[str, Any]] = field(default_factory=list)  # policies_referenced
    raw_direct: str | None = None  # a VARIANT holding text instead of an array (malformed)


class AccountUsage:
    """The SNOWFLAKE.ACCOUNT_USAGE views of the fake server, written through the connector."""

    def __init__(self, connection: SnowflakeConnection) -> None:
        self.conn = connection

    def sql(self, text: str, params: dict[str, Any] | None = None) -> list[tuple[Any, ...]]:
        cursor = self.conn.cursor()
        cursor.execute(text, params)
        return list(cursor.fetchall()) if cursor.description else []  # type: ignore[arg-type]

    def reset(self, views: Sequence[str] = tuple(VIEWS)) -> None:
        """Empty views, and only these exist. Stages stay: fakesnow has no DROP STAGE, so
        tests that want an unknown stage use a name no test creates."""
        self.sql("CREATE DATABASE IF NOT EXISTS SNOWFLAKE")
        self.sql("CREATE SCHEMA IF NOT EXISTS SNOWFLAKE.ACCOUNT_USAGE")
        for name, text in VIEWS.items():
            if name in views:
                self.sql(text)
            else:
                self.sql(f"DROP TABLE IF EXISTS SNOWFLAKE.ACCOUNT_USAGE.{name}")

    def create_stage(self, database: str, schema: str, name: str, url: str | None) -> None:
        self.sql(f'CREATE DATABASE IF NOT EXISTS "{database}"')
        self.sql(f'CREATE SCHEMA IF NOT EXISTS "{database}"."{schema}"')
        location = f" URL='{url}'" if url else ""
        self.sql(f'CREATE OR REPLACE STAGE "{database}"."{schema}"."{name}"{location}')

    def add(self, *queries: Query) -> None:
        for q in queries:
            direct = q.raw_direct if q.raw_direct is not None else json.dumps(q.direct)
            base = json.dumps(q.base if q.base is not None else q.direct)
            to_variant = "TO_VARIANT" if q.raw_direct is not None else "PARSE_JSON"
            self.sql(
                "INSERT INTO SNOWFLAKE.ACCOUNT_USAGE.ACCESS_HISTORY (query_id, query_start_time,"
                " user_name, direct_objects_accessed, base_objects_accessed, objects_modified,"
                " object_modified_by_ddl, policies_referenced, parent_query_id, root_query_id)"
                f" SELECT %(id)s, TO_TIMESTAMP_LTZ(%(at)s, 3), %(user)s, {to_variant}(%(direct)s),"
                " PARSE_JSON(%(base)s), PARSE_JSON(%(modified)s), PARSE_JSON(%(ddl)s),"
                " PARSE_JSON(%(policies)s), NULL, NULL",
                {
                    "id": q.query_id,
                    "at": q.at,
                    "user": q.user,
                    "direct": direct,
                    "base": base,
                    "modified": json.dumps(q.modified),
                    "ddl": json.dumps(q.ddl),
                    "policies": json.dumps(q.policies),
                },
            )
            if q.in_query_history:
                self.sql(
                    "INSERT INTO SNOWFLAKE.ACCOUNT_USAGE.QUERY_HISTORY (query_id, query_text,"
                    " database_name, schema_name, query_type, user_name, role_name,"
                    " warehouse_name, execution_status, start_time, end_time, query_hash,"
                    " query_parameterized_hash) SELECT %(id)s, %(text)s, %(db)s, %(schema)s,"
                    " %(type)s, %(user)s, 'ETL_ROLE', 'ETL_WH', 'SUCCESS',"
                    " TO_TIMESTAMP_LTZ(%(at)s, 3), TO_TIMESTAMP_LTZ(%(end)s, 3), %(hash)s,"
                    " %(phash)s",
                    {
                        "id": q.query_id,
                        "text": q.text,
                        "db": q.database,
                        "schema": q.schema,
                        "type": q.query_type,
                        "user": q.user,
                        "at": q.at,
                        "end": q.at + 1000,
                        "hash": f"h-{q.query_id}",
                        "phash": q.parameterized_hash,
                    },
                )

    def add_dependency(
        self, referencing: str, referencing_domain: str, referenced: str, referenced_domain: str
    ) -> None:
        """One OBJECT_DEPENDENCIES row; names are DB.SCHEMA.NAME as stored (no dots inside)."""
        ing, ed = referencing.split("."), referenced.split(".")
        self.sql(
            "INSERT INTO SNOWFLAKE.ACCOUNT_USAGE.OBJECT_DEPENDENCIES VALUES (%(ed_db)s,"
            " %(ed_s)s, %(ed_n)s, %(ed_id)s, %(ed_dom)s, %(ing_db)s, %(ing_s)s, %(ing_n)s,"
            " %(ing_id)s, %(ing_dom)s, 'BY_NAME')",
            {
                "ed_db": ed[0],
                "ed_s": ed[1],
                "ed_n": ed[2],
                "ed_id": object_id(referenced),
                "ed_dom": referenced_domain,
                "ing_db": ing[0],
                "ing_s": ing[1],
                "ing_n": ing[2],
                "ing_id": object_id(referencing),
                "ing_dom": referencing_domain,
            },
        )

    def set_tag(
        self,
        tag: str,
        value: str,
        table: str,
        column: str | None = None,
        *,
        domain: str = "TABLE",
        deleted_at: int | None = None,
        apply_method: str = "MANUAL",
    ) -> None:
        """One TAG_REFERENCES row: `tag` and `table` are DB.SCHEMA.NAME as stored (no dots
        inside); a tag on a column has the domain COLUMN and its table as the object."""
        tag_parts, parts = tag.split("."), table.split(".")
        self.sql(
            "INSERT INTO SNOWFLAKE.ACCOUNT_USAGE.TAG_REFERENCES SELECT %(tdb)s, %(ts)s,"
            " %(tid)s, %(tn)s, %(value)s, %(db)s, %(s)s, %(oid)s, %(n)s,"
            " IFF(%(deleted)s IS NULL, NULL, TO_TIMESTAMP_LTZ(%(deleted)s, 3)), %(domain)s,"
            " %(cid)s, %(column)s, %(method)s",
            {
                "tdb": tag_parts[0],
                "ts": tag_parts[1],
                "tid": object_id(tag),
                "tn": tag_parts[2],
                "value": value,
                "db": parts[0],
                "s": parts[1],
                "oid": object_id(table),
                "n": parts[2],
                "deleted": deleted_at,
                "domain": "COLUMN" if column is not None else domain,
                "cid": object_id(f"{table}.{column}") if column is not None else None,
                "column": column,
                "method": apply_method,
            },
        )

    def unset_tag(self, tag: str, table: str, column: str | None = None) -> None:
        """ALTER ... UNSET TAG as the view shows it: the reference's row is gone."""
        tag_parts, parts = tag.split("."), table.split(".")
        self.sql(
            "DELETE FROM SNOWFLAKE.ACCOUNT_USAGE.TAG_REFERENCES WHERE tag_database = %(tdb)s"
            " AND tag_schema = %(ts)s AND tag_name = %(tn)s AND object_database = %(db)s"
            " AND object_schema = %(s)s AND object_name = %(n)s"
            " AND equal_null(column_name, %(column)s)",
            {
                "tdb": tag_parts[0],
                "ts": tag_parts[1],
                "tn": tag_parts[2],
                "db": parts[0],
                "s": parts[1],
                "n": parts[2],
                "column": column,
            },
        )

    def add_column(
        self,
        table: str,
        column: str,
        data_type: str,
        position: int,
        *,
        length: int | None = None,
        precision: int | None = None,
        scale: int | None = None,
        deleted_at: int | None = None,
    ) -> None:
        """One COLUMNS row: `table` is DB.SCHEMA.NAME as stored (no dots inside); a column
        dropped keeps its row with the time of the drop in DELETED."""
        parts = table.split(".")
        self.sql(
            "INSERT INTO SNOWFLAKE.ACCOUNT_USAGE.COLUMNS SELECT %(cid)s, %(column)s, %(tid)s,"
            " %(n)s, %(sid)s, %(s)s, %(did)s, %(db)s, %(position)s, 'YES', %(type)s,"
            " %(length)s, %(precision)s, %(scale)s, NULL,"
            " IFF(%(deleted)s IS NULL, NULL, TO_TIMESTAMP_LTZ(%(deleted)s, 3))",
            {
                "cid": object_id(f"{table}.{column}.{deleted_at}"),
                "column": column,
                "tid": object_id(table),
                "n": parts[2],
                "sid": object_id(".".join(parts[:2])),
                "s": parts[1],
                "did": object_id(parts[0]),
                "db": parts[0],
                "position": position,
                "type": data_type,
                "length": length,
                "precision": precision,
                "scale": scale,
                "deleted": deleted_at,
            },
        )
