"""Which sources reach a written column only through masking functions, read from SQL text
with sqlglot (the Snowflake harvester's reading of query text; dbt's fast path underneath)."""

from __future__ import annotations

import pytest

from lineagegraph.harvest.snowflake.masking import query_masks
from lineagegraph.masking import DEFAULT_NAMES, MaskingSettings

READ = {"RAW.PUBLIC.CUSTOMERS": ["EMAIL", "ID"], "RAW.PUBLIC.ORDERS": ["ID", "AMOUNT"]}


@pytest.mark.parametrize(
    ("sql", "masks"),
    [
        (
            "create table h as select sha2(email) as e, id from raw.public.customers",
            {"e": {("customers", "email"): ("SHA2",)}},
        ),
        # one plain occurrence beside a masked one: plain
        ("create table h as select concat(email, md5(email)) as e from customers", {}),
        # the hash sits in a CTE, the copy of its output outside
        (
            "insert into h (e) with x as (select hash(email) as k from customers) select k from x",
            {"e": {("customers", "email"): ("HASH",)}},
        ),
        # positional INSERT names, unnamed projections, a join with unqualified columns
        (
            "insert into h (n, a) select count(distinct email), amount"
            " from customers c join orders o on c.id = o.id group by amount",
            {"n": {("customers", "email"): ("COUNT",)}},
        ),
        # MAX keeps the values; MERGE is not read
        ("create table h as select max(email) as e from customers", {}),
        (
            "merge into h using customers c on h.id = c.id"
            " when matched then update set e = md5(c.email)",
            {},
        ),
        ("select from where (", {}),
    ],
)
def test_query_masks(sql: str, masks: dict[str, object]) -> None:
    found = query_masks(sql, DEFAULT_NAMES, READ)
    assert {column: pairs for column, pairs in found.items() if pairs} == masks


def test_the_list_is_configurable_and_case_blind() -> None:
    names = MaskingSettings(functions=["my_mask", "Sha2"]).names
    sql = "create table h as select my_mask(email) as e, md5(id) as i from customers"
    found = query_masks(sql, names, READ)
    assert found == {"e": {("customers", "email"): ("MY_MASK",)}, "i": {}}  # MD5 is not listed
    with pytest.raises(ValueError, match="empty function name"):
        MaskingSettings(functions=[" "])
