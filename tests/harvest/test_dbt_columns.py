"""Column lineage of dbt SQL (the fast path agrees with sqlglot's lineage, and hands over what
it does not read exactly), and the urns of relations per adapter."""

from __future__ import annotations

import pytest
from sqlglot import parse_one

from lineagegraph import identity
from lineagegraph.harvest.dbt.columns import ColumnLineageError, column_sources
from lineagegraph.harvest.dbt.naming import Naming
from lineagegraph.harvest.dbt.trace import trace

ORDERS, CUSTOMERS = ("db", "main", "orders"), ("db", "main", "customers")
UPSTREAM = {
    ORDERS: ["order_id", "customer_id", "amount", "ordered_at"],
    CUSTOMERS: ["id", "first_name", "last_name"],
}
READ = [
    # qualified columns through aliases, an expression of two columns
    'select o.order_id, o.amount * 100 as cents from "db"."main"."orders" as o',
    # unqualified names placed by the relations' columns, across a join
    "select order_id, first_name || ' ' || last_name as name from db.main.orders "
    "join db.main.customers on customers.id = orders.customer_id",
    # an ephemeral model inlined as a CTE, and a CTE over a CTE
    "with c as (select id as customer_id, first_name from db.main.customers), "
    "d as (select customer_id as cid, first_name as fn from c) "
    "select o.order_id, d.fn from db.main.orders o left join d on d.cid = o.customer_id",
    # a subquery in FROM, a window function, CASE and an aggregate
    "select s.customer_id, sum(s.amount) over (partition by s.customer_id) as running, "
    "case when s.amount > 0 then s.order_id end as paid, count(*) as n "
    "from (select customer_id, amount, order_id from db.main.orders) as s "
    "group by s.customer_id, s.amount, s.order_id",
    # stars: over a table, over a CTE, and a qualified one
    "select * from db.main.customers",
    "with x as (select order_id, amount from db.main.orders) select * from x",
    "select c.*, o.amount from db.main.customers c join db.main.orders o on o.customer_id = c.id",
]


def as_sets(found: dict[str, list[tuple[tuple[str, ...], str]]]) -> dict[str, set[object]]:
    return {column.lower(): set(pairs) for column, pairs in found.items()}


@pytest.mark.parametrize("sql", READ)
def test_fast_path_reads_common_selects_as_sqlglot_lineage_does(sql: str) -> None:
    fast = trace(parse_one(sql, dialect="duckdb"), UPSTREAM)
    assert fast is not None, "the fast path should read this shape"
    slow = column_sources(sql, "duckdb", UPSTREAM, fast=False)
    # count(*) reads no column: sqlglot lists the table's star, the fast path nothing
    slow = {c: [p for p in pairs if p[1] != "*"] for c, pairs in slow.items()}
    assert as_sets(fast) == as_sets(slow)


def test_a_cte_chain_ends_at_the_table_columns() -> None:
    fast = trace(parse_one(READ[2], dialect="duckdb"), UPSTREAM)
    assert fast == {"order_id": [(ORDERS, "order_id")], "fn": [(CUSTOMERS, "first_name")]}


@pytest.mark.parametrize(
    "sql",
    [
        "select order_id from db.main.orders union all select id from db.main.customers",
        "select o.order_id, (select max(id) from db.main.customers) as top from db.main.orders o",
        # `id2`: a column neither relation lists, so no one source to place it in
        "select id2 from db.main.orders join db.main.customers on true",
        "select * exclude (amount) from db.main.orders",
        "select x from unnest([1, 2]) as t(x)",
    ],
)
def test_other_shapes_go_to_sqlglot_lineage(sql: str) -> None:
    tree = parse_one(sql, dialect="duckdb")
    assert trace(tree, UPSTREAM) is None
    column_sources(sql, "duckdb", UPSTREAM)  # and sqlglot reads it (or says why not)


def test_unreadable_sql_is_an_error_naming_the_reason() -> None:
    with pytest.raises(ColumnLineageError, match="ParseError"):
        column_sources("select from where (", "duckdb", UPSTREAM)


def test_snowflake_names_compare_without_case() -> None:
    sql = 'select "ORDER_ID", amount as amount_usd from RAW.SALES."OrderLines"'
    found = column_sources(
        sql, "snowflake", {("raw", "sales", "orderlines"): ["ORDER_ID", "AMOUNT"]}
    )
    assert as_sets(found) == {
        "order_id": {(("raw", "sales", "orderlines"), "order_id")},
        "amount_usd": {(("raw", "sales", "orderlines"), "amount")},
    }


# --- naming per adapter (OpenLineage's dataset naming) ---------------------------------------

NODE = {
    "database": "shop",
    "schema": "public",
    "alias": "orders",
    "name": "orders_model",
    "relation_name": '"shop"."public"."orders"',
}


@pytest.mark.parametrize(
    ("adapter", "namespace", "urn"),
    [
        ("postgres", "postgres://db.example.com:5432", "postgres://db.example.com:5432/shop.public.orders"),
        ("databricks", "databricks://adb-1.azuredatabricks.net",
         "databricks://adb-1.azuredatabricks.net/shop.public.orders"),
        ("duckdb", "duckdb:///data/dev.duckdb", "duckdb:///data/dev.duckdb/shop.public.orders"),
        ("bigquery", None, "bigquery:///shop.public.orders"),
        # every part quoted (quoting: true): Snowflake keeps their case
        ("snowflake", "snowflake://Acme-Prod", "snowflake://acme-prod/shop.public.orders"),
    ],
)  # fmt: skip
def test_relation_urns_per_adapter(adapter: str, namespace: str | None, urn: str) -> None:
    naming = Naming.of(adapter, None, namespace)
    assert naming.relation_urn(NODE) == urn
    assert identity.system_of(urn) == adapter


def test_a_source_uses_its_identifier() -> None:
    source = {
        "database": "RAW",
        "schema": "SALES",
        "identifier": "orders",
        "name": "orders_src",
        "relation_name": None,
    }
    assert Naming.of("snowflake", "acct", None).relation_urn(source) == (
        "snowflake://acct/RAW.SALES.ORDERS"
    )
