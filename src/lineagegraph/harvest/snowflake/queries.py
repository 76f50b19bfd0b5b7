"""Every SQL statement the Snowflake harvester sends, in one place (DataHub's snowflake_query.py).

Values are never formatted into the text: each statement takes pyformat parameters that the
connector binds (`cursor.execute(sql, params)`), and identifiers are never parameters (stages are
looked up with a bound LIKE pattern and matched exactly in Python). Each statement is also parsed
with sqlglot's Snowflake dialect by the tests, as a second check that it is Snowflake SQL.

Result columns are named in upper case with quoted aliases, so rows read the same on Snowflake
and on any stand-in.
"""

from __future__ import annotations

# The ACCOUNT_USAGE views read, for error messages that say which one failed.
ACCESS_HISTORY_VIEW = "SNOWFLAKE.ACCOUNT_USAGE.ACCESS_HISTORY"
QUERY_HISTORY_VIEW = "SNOWFLAKE.ACCOUNT_USAGE.QUERY_HISTORY"
OBJECT_DEPENDENCIES_VIEW = "SNOWFLAKE.ACCOUNT_USAGE.OBJECT_DEPENDENCIES"
TAG_REFERENCES_VIEW = "SNOWFLAKE.ACCOUNT_USAGE.TAG_REFERENCES"
COLUMNS_VIEW = "SNOWFLAKE.ACCOUNT_USAGE.COLUMNS"

# One row per query since a watermark, oldest first, with its QUERY_HISTORY facts. The VARIANT
# columns come back as JSON text and are parsed in Python, so one malformed row can be skipped
# and reported instead of failing a FLATTEN for the whole window. The query text is fetched
# only when it may name a stage (`@`: the COPY path is parsed from it) or the query wrote
# something (the functions between a written column and its sources are read from it).
ACCESS_HISTORY_SINCE = """
SELECT
    ah.query_id AS "QUERY_ID",
    DATE_PART(EPOCH_MILLISECOND, ah.query_start_time) AS "START_MS",
    ah.user_name AS "USER_NAME",
    ah.direct_objects_accessed AS "DIRECT_OBJECTS_ACCESSED",
    ah.base_objects_accessed AS "BASE_OBJECTS_ACCESSED",
    ah.objects_modified AS "OBJECTS_MODIFIED",
    ah.object_modified_by_ddl AS "OBJECT_MODIFIED_BY_DDL",
    qh.query_parameterized_hash AS "QUERY_PARAMETERIZED_HASH",
    qh.query_type AS "QUERY_TYPE",
    qh.database_name AS "DATABASE_NAME",
    qh.schema_name AS "SCHEMA_NAME",
    IFF(CONTAINS(qh.query_text, '@') OR ARRAY_SIZE(ah.objects_modified) > 0,
        qh.query_text, NULL) AS "QUERY_TEXT",
    ah.policies_referenced AS "POLICIES_REFERENCED"
FROM SNOWFLAKE.ACCOUNT_USAGE.ACCESS_HISTORY AS ah
LEFT JOIN SNOWFLAKE.ACCOUNT_USAGE.QUERY_HISTORY AS qh
    ON qh.query_id = ah.query_id
    AND qh.start_time >= TO_TIMESTAMP_LTZ(%(start_ms)s, 3)
WHERE ah.query_start_time >= TO_TIMESTAMP_LTZ(%(start_ms)s, 3)
ORDER BY ah.query_start_time, ah.query_id
"""

# The columns of ACCESS_HISTORY_SINCE, in order: rows are read by position.
ACCESS_HISTORY_COLUMNS = (
    "QUERY_ID",
    "START_MS",
    "USER_NAME",
    "DIRECT_OBJECTS_ACCESSED",
    "BASE_OBJECTS_ACCESSED",
    "OBJECTS_MODIFIED",
    "OBJECT_MODIFIED_BY_DDL",
    "QUERY_PARAMETERIZED_HASH",
    "QUERY_TYPE",
    "DATABASE_NAME",
    "SCHEMA_NAME",
    "QUERY_TEXT",
    "POLICIES_REFERENCED",
)

# The upstreams of views and external tables. Latency is up to 3 hours, and the view keeps
# no time, so every harvest reads it whole.
OBJECT_DEPENDENCIES = """
SELECT
    referencing_database AS "REFERENCING_DATABASE",
    referencing_schema AS "REFERENCING_SCHEMA",
    referencing_object_name AS "REFERENCING_OBJECT_NAME",
    referencing_object_domain AS "REFERENCING_OBJECT_DOMAIN",
    referenced_database AS "REFERENCED_DATABASE",
    referenced_schema AS "REFERENCED_SCHEMA",
    referenced_object_name AS "REFERENCED_OBJECT_NAME",
    referenced_object_domain AS "REFERENCED_OBJECT_DOMAIN"
FROM SNOWFLAKE.ACCOUNT_USAGE.OBJECT_DEPENDENCIES
WHERE referencing_object_domain IN ('VIEW', 'MATERIALIZED VIEW', 'EXTERNAL TABLE')
"""

# The views OBJECT_DEPENDENCIES lists, read before ACCESS_HISTORY: only views missing here learn
# their upstreams from the base objects of reads through them.
DEPENDENT_VIEWS = """
SELECT DISTINCT
    referencing_database AS "REFERENCING_DATABASE",
    referencing_schema AS "REFERENCING_SCHEMA",
    referencing_object_name AS "REFERENCING_OBJECT_NAME"
FROM SNOWFLAKE.ACCOUNT_USAGE.OBJECT_DEPENDENCIES
WHERE referencing_object_domain IN ('VIEW', 'MATERIALIZED VIEW')
"""

# Every tag set on a table-like object or a column, as of now. The view keeps no time of
# setting or unsetting (an unset tag's row just goes away), so every harvest reads it whole and
# compares with the tags it stated before; it is one row per tag and object, small beside
# ACCESS_HISTORY. Rows of dropped objects are left out: the DROP is the harvest's own fact.
TAG_REFERENCES = """
SELECT
    tag_database AS "TAG_DATABASE",
    tag_schema AS "TAG_SCHEMA",
    tag_name AS "TAG_NAME",
    tag_value AS "TAG_VALUE",
    object_database AS "OBJECT_DATABASE",
    object_schema AS "OBJECT_SCHEMA",
    object_name AS "OBJECT_NAME",
    column_name AS "COLUMN_NAME",
    domain AS "DOMAIN",
    apply_method AS "APPLY_METHOD"
FROM SNOWFLAKE.ACCOUNT_USAGE.TAG_REFERENCES
WHERE object_deleted IS NULL
    AND object_database IS NOT NULL AND object_schema IS NOT NULL
ORDER BY object_database, object_schema, object_name, column_name, tag_name, tag_database,
    tag_schema
"""

# Stages by name across the account. LIKE is case-insensitive and `_` matches any character,
# so the rows are matched on database, schema and name exactly by the caller.
SHOW_STAGES_LIKE = "SHOW STAGES LIKE %(name)s IN ACCOUNT"

# External tables and their locations (`location` is the stage URL plus the table's path).
SHOW_EXTERNAL_TABLES = "SHOW EXTERNAL TABLES IN ACCOUNT"

# How many queries that write data QUERY_HISTORY lists in a settled window (older than
# ACCESS_HISTORY's latency): an empty ACCESS_HISTORY beside writes means a Standard Edition
# account, where ACCESS_HISTORY exists but stays empty.
WRITING_QUERIES_BETWEEN = """
SELECT COUNT(*) AS "WRITES"
FROM SNOWFLAKE.ACCOUNT_USAGE.QUERY_HISTORY
WHERE start_time >= TO_TIMESTAMP_LTZ(%(start_ms)s, 3)
    AND start_time < TO_TIMESTAMP_LTZ(%(end_ms)s, 3)
    AND execution_status = 'SUCCESS'
    AND query_type IN ('INSERT', 'MERGE', 'UPDATE', 'DELETE', 'COPY', 'UNLOAD',
                       'CREATE_TABLE_AS_SELECT', 'MULTI_TABLE_INSERT')
"""

# Every statement above with example parameters, for the sqlglot check.
ALL_STATEMENTS: dict[str, tuple[str, dict[str, object]]] = {
    "ACCESS_HISTORY_SINCE": (ACCESS_HISTORY_SINCE, {"start_ms": 1_700_000_000_000}),
    "OBJECT_DEPENDENCIES": (OBJECT_DEPENDENCIES, {}),
    "DEPENDENT_VIEWS": (DEPENDENT_VIEWS, {}),
    "TAG_REFERENCES": (TAG_REFERENCES, {}),
    "SHOW_STAGES_LIKE": (SHOW_STAGES_LIKE, {"name": "LANDING"}),
    "SHOW_EXTERNAL_TABLES": (SHOW_EXTERNAL_TABLES, {}),
    "WRITING_QUERIES_BETWEEN": (
        WRITING_QUERIES_BETWEEN,
        {"start_ms": 1_700_000_000_000, "end_ms": 1_700_010_000_000},
    ),
}

# Every column of every table as it stands, and those dropped since the harvest's window began
# (their DELETED time dates the drop): schema versions (harvest/snowflake/schemas.py). Grouped by
# table, so a table's rows come together however many `fetchmany` calls it takes.
COLUMNS = """
SELECT
    table_catalog AS "TABLE_CATALOG",
    table_schema AS "TABLE_SCHEMA",
    table_name AS "TABLE_NAME",
    column_name AS "COLUMN_NAME",
    data_type AS "DATA_TYPE",
    character_maximum_length AS "CHARACTER_MAXIMUM_LENGTH",
    numeric_precision AS "NUMERIC_PRECISION",
    numeric_scale AS "NUMERIC_SCALE",
    DATE_PART(EPOCH_MILLISECOND, deleted) AS "DELETED_MS"
FROM SNOWFLAKE.ACCOUNT_USAGE.COLUMNS
WHERE table_catalog IS NOT NULL AND table_schema IS NOT NULL AND table_name IS NOT NULL
    AND (deleted IS NULL OR deleted >= TO_TIMESTAMP_LTZ(%(start_ms)s, 3))
ORDER BY table_catalog, table_schema, table_name, ordinal_position, column_name
"""
