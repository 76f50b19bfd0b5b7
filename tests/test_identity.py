"""Tests for lineagegraph.identity: every expected urn below is written out by hand."""

from __future__ import annotations

import doctest
import hashlib
import re
import unicodedata
from collections.abc import Callable
from urllib.parse import quote_plus

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lineagegraph import identity
from lineagegraph.identity import (
    NO_FOLD_RULES,
    FoldRules,
    IdentityError,
    column_urn,
    dataset_urn,
    decode_inventory_key,
    is_folder_marker,
    name_of,
    openlineage_job_urn,
    openlineage_urn,
    parse_snowflake_name,
    quote_snowflake_name,
    s3_dataset_urn_for_key,
    s3_file_urn,
    snowflake_query_transformation_urn,
    snowflake_stage_placeholder_urn,
    snowflake_urn,
    snowflake_urn_from_parts,
    spark_table_urn,
    spark_transformation_urn,
    split_column_urn,
    system_of,
)

DATES = FoldRules((r"\d{4}/\d{2}/\d{2}",))
CAFE_NFC = unicodedata.normalize("NFC", "café")
CAFE_NFD = unicodedata.normalize("NFD", "café")


def dataset_contains(dataset: str, asset_dataset: str) -> bool:
    """The containment rule (docs/identity.md: it compares dataset urns, not raw keys), as the
    reports' statements apply it: `asset_dataset` is `dataset` or below it at a segment boundary.
    The tests' oracle for what identity's urns must make true."""
    prefix = dataset if dataset.endswith("/") else dataset + "/"
    return asset_dataset == dataset or asset_dataset.startswith(prefix)


def test_doctests_pass() -> None:
    result = doctest.testmod(identity)
    assert result.attempted > 0
    assert result.failed == 0


# --- S3 objects -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "urn"),
    [
        ("sales/orders/x.csv", "s3://b/sales/orders/x.csv"),
        ("a//b///c.csv", "s3://b/a//b///c.csv"),  # no collapsing for listed objects
        ("/leading.csv", "s3://b//leading.csv"),
        ("dt=2024-01-01/x.csv", "s3://b/dt=2024-01-01/x.csv"),  # no folding either
        ('a b/it\'s "q".csv', 's3://b/a b/it\'s "q".csv'),
        ("hash#tag.csv", "s3://b/hash#tag.csv"),
        ("trailing ", "s3://b/trailing "),
        ("dir/", "s3://b/dir/"),
        ("日本/データ.csv", "s3://b/日本/データ.csv"),
    ],
)
def test_file_urn_is_the_key_exactly_as_listed(key: str, urn: str) -> None:
    assert s3_file_urn("b", key) == urn


def test_nfc_and_nfd_spellings_are_two_file_urns() -> None:
    assert CAFE_NFC != CAFE_NFD
    nfc, nfd = s3_file_urn("b", f"{CAFE_NFC}.csv"), s3_file_urn("b", f"{CAFE_NFD}.csv")
    assert nfc != nfd
    assert nfc == "s3://b/caf\u00e9.csv"
    assert nfd == "s3://b/cafe\u0301.csv"


@pytest.mark.parametrize(
    ("encoded", "key"),
    [
        ("a+b.csv", "a b.csv"),  # '+' is a space in form encoding
        ("a%2Bb.csv", "a+b.csv"),  # a literal '+' arrives as %2B
        ("a%20b.csv", "a b.csv"),
        ("100%25.csv", "100%.csv"),
        ("caf%C3%A9.csv", "caf\u00e9.csv"),
        ("cafe%CC%81.csv", "cafe\u0301.csv"),  # NFD stays NFD
        ("%22q%22+%27s%27.csv", "\"q\" 's'.csv"),
        ("a%2Fb/c", "a/b/c"),
        ("dt%3D2024-01-01/x", "dt=2024-01-01/x"),
        ("%E6%97%A5%E6%9C%AC/x", "日本/x"),
        ("plain/key.csv", "plain/key.csv"),
        ("50%off", "50%off"),  # not an escape: left as is, like every URL decoder
    ],
)
def test_decode_inventory_key(encoded: str, key: str) -> None:
    assert decode_inventory_key(encoded) == key


def test_decoded_inventory_keys_keep_nfc_and_nfd_apart() -> None:
    nfc = decode_inventory_key("caf%C3%A9.csv")
    nfd = decode_inventory_key("cafe%CC%81.csv")
    assert s3_file_urn("b", nfc) != s3_file_urn("b", nfd)


def test_decode_inventory_key_refuses_invalid_utf8() -> None:
    with pytest.raises(IdentityError, match=re.escape("'bad%FF.csv'")):
        decode_inventory_key("bad%FF.csv")


@pytest.mark.parametrize(
    ("key", "size", "marker"),
    [
        ("logs/", 0, True),
        ("a/b/", 0, True),
        ("/", 0, True),
        ("logs/", 12, False),  # an object with content is an asset even if it ends in '/'
        ("logs", 0, False),  # an empty file is still a file
        ("logs/x.csv", 0, False),
    ],
)
def test_is_folder_marker(key: str, size: int, marker: bool) -> None:
    assert is_folder_marker(key, size) is marker


# --- datasets of listed objects -----------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "dataset"),
    [
        ("sales/orders/x.csv", "s3://b/sales/orders"),
        ("x.csv", "s3://b"),  # bucket-root objects belong to the bucket
        ("/x.csv", "s3://b"),
        ("a//b///c.csv", "s3://b/a/b"),
        ("//a/x", "s3://b/a"),
        ("t/dt=2024-01-01/x.parquet", "s3://b/t"),
        ("t/year=2024/month=01/day=31/x.parquet", "s3://b/t"),
        ("t/dt=2024-01-01/sub/dir/x.parquet", "s3://b/t"),  # everything below folds too
        ("t/region=eu/2024/x", "s3://b/t"),
        ("dt=2024-01-01/x.csv", "s3://b"),
        ("t/x=1.csv", "s3://b/t"),  # '=' in the file name does not fold
        ("t/a=b=c/x", "s3://b/t"),
        ("t/k=/x", "s3://b/t"),  # an empty value is still key=value
        ("t/=v/x", "s3://b/t/=v"),  # an empty key is not a Hive segment
        ("t/==/x", "s3://b/t/=="),
        ("t/dir/", "s3://b/t/dir"),  # a non-empty object whose key ends in '/'
        ("données/é=1/x", "s3://b/données"),
        ('a b/"q"/it\'s#1/x', 's3://b/a b/"q"/it\'s#1'),
        ("logs/2024/01/31/x.gz", "s3://b/logs/2024/01/31"),  # dates fold only when configured
    ],
)
def test_s3_dataset_urn_for_key(key: str, dataset: str) -> None:
    assert s3_dataset_urn_for_key("b", key) == dataset


@pytest.mark.parametrize(
    ("key", "dataset"),
    [
        ("logs/2024/01/31/x.gz", "s3://b/logs"),
        ("logs/app/2024/01/31/hour=03/x.gz", "s3://b/logs/app"),
        ("logs/2024//01/31/x.gz", "s3://b/logs"),  # collapsing happens before matching
        ("logs/2024/01/x.gz", "s3://b/logs/2024/01"),  # needs all three segments
        ("logs/2024/01/31", "s3://b/logs/2024/01"),  # the file name is not a directory
        ("logs/20240/01/31/x", "s3://b/logs/20240/01/31"),  # whole segments only
        ("2024/01/31/x", "s3://b"),
    ],
)
def test_date_pattern_folds_whole_consecutive_segments(key: str, dataset: str) -> None:
    assert s3_dataset_urn_for_key("b", key, DATES) == dataset


def test_patterns_match_whole_segments_not_substrings() -> None:
    rules = FoldRules((r"v\d",))
    assert s3_dataset_urn_for_key("b", "api/v1/x", rules) == "s3://b/api"
    assert s3_dataset_urn_for_key("b", "api/v1.2/x", rules) == "s3://b/api/v1.2"
    assert s3_dataset_urn_for_key("b", "api/xv1/x", rules) == "s3://b/api/xv1"


def test_several_patterns_fold_at_the_earliest_match() -> None:
    rules = FoldRules((r"run-\d+", r"\d{4}/\d{2}"))
    assert s3_dataset_urn_for_key("b", "t/a/2024/01/run-7/x", rules) == "s3://b/t/a"
    assert s3_dataset_urn_for_key("b", "t/run-7/2024/01/x", rules) == "s3://b/t"


def test_fold_rules_compile_once_and_compare_by_patterns() -> None:
    assert FoldRules([r"\d{8}"]) == FoldRules((r"\d{8}",))  # type: ignore[arg-type]
    assert FoldRules([r"\d{8}"]).patterns == (r"\d{8}",)  # type: ignore[arg-type]
    assert hash(FoldRules((r"\d{8}",))) == hash(FoldRules((r"\d{8}",)))
    assert FoldRules() == NO_FOLD_RULES


def test_invalid_fold_pattern_is_named() -> None:
    with pytest.raises(IdentityError, match=re.escape("'([0-9]'")):
        FoldRules((r"\d{4}", "([0-9]"))


def test_fold_patterns_given_as_one_string_are_refused() -> None:
    with pytest.raises(IdentityError, match=re.escape(repr(r"\d{4}"))):
        FoldRules(r"\d{4}")  # type: ignore[arg-type]


# --- referenced paths ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "dataset"),
    [
        ("s3://b/sales/orders", "s3://b/sales/orders"),
        ("s3a://b/sales/orders", "s3://b/sales/orders"),
        ("s3n://b/sales/orders", "s3://b/sales/orders"),
        ("S3A://b/sales/orders", "s3://b/sales/orders"),
        ("s3a://b/sales/orders/", "s3://b/sales/orders"),
        ("s3a://b/sales//orders///", "s3://b/sales/orders"),
        ("s3a://b//sales/orders", "s3://b/sales/orders"),
        ("s3a://b/", "s3://b"),
        ("s3://b", "s3://b"),
        ("s3n://b///", "s3://b"),
        ("s3a://b/t/dt=2024-01-01", "s3://b/t"),  # every referenced segment is a directory
        ("s3a://b/t/dt=2024-01-01/", "s3://b/t"),
        ("s3a://b/t/year=2024/month=01", "s3://b/t"),
        ("s3://b/t/x=1.csv", "s3://b/t"),
        ("s3://b/t/=v", "s3://b/t/=v"),
        ("s3://b/dt=1", "s3://b"),
        ("s3://b/t/part-00000.parquet", "s3://b/t/part-00000.parquet"),
        ("s3://b/a%20b/c", "s3://b/a%20b/c"),  # referenced paths are not percent-decoded
        ('s3://b/données/"q"/it\'s', 's3://b/données/"q"/it\'s'),
        ("/data/out", "file:///data/out"),
        ("/data//out/", "file:///data/out"),
        ("/data/out/part=3", "file:///data/out"),
        ("file:/data/out", "file:///data/out"),
        ("file:///data/out/", "file:///data/out"),
        ("file:////data//out", "file:///data/out"),
        ("FILE:///data/out", "file:///data/out"),
        ("/", "file:///"),
        ("file:///", "file:///"),
        ("/dt=2024-01-01/x", "file:///"),
    ],
)
def test_dataset_urn(path: str, dataset: str) -> None:
    assert dataset_urn(path) == dataset


def test_dataset_urn_applies_extra_patterns() -> None:
    assert dataset_urn("s3a://b/logs/2024/01/31/", DATES) == "s3://b/logs"
    assert dataset_urn("/var/logs/2024/01/31", DATES) == "file:///var/logs"
    assert dataset_urn("s3a://b/logs/2024/01/31/") == "s3://b/logs/2024/01/31"


def test_dataset_urn_keeps_nfc_and_nfd_apart() -> None:
    assert dataset_urn(f"s3://b/{CAFE_NFC}") != dataset_urn(f"s3://b/{CAFE_NFD}")


@pytest.mark.parametrize(
    "path",
    [
        "",
        "data/out",  # relative local path
        "./data",
        "file:data/out",
        "file://host/data",
        "http://x",
        "hdfs://nn/data",
        "gs://b/t",
        "s3:/b/t",
        "s3:///t",
        "s3a://",
        "C:/data",
    ],
)
def test_dataset_urn_refuses_what_it_cannot_place(path: str) -> None:
    with pytest.raises(IdentityError, match=re.escape(repr(path))):
        dataset_urn(path)


def test_spark_write_meets_the_objects_it_wrote() -> None:
    written = dataset_urn("s3a://lake/sales/orders/dt=2024-01-01/")
    listed = s3_dataset_urn_for_key("lake", "sales/orders/dt=2024-01-01/part-0000.parquet")
    assert written == listed == "s3://lake/sales/orders"


# --- containment --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("dataset", "asset_dataset", "contained"),
    [
        ("s3://b/partner", "s3://b/partner", True),
        ("s3://b/partner", "s3://b/partner/feeds", True),
        ("s3://b/partner", "s3://b/partner/feeds/daily", True),
        ("s3://b/partner", "s3://b/partnerX", False),
        ("s3://b/partner", "s3://b/partner-feeds", False),
        ("s3://b/partner/feeds", "s3://b/partner", False),
        ("s3://b", "s3://b/partner", True),
        ("s3://b", "s3://bb/partner", False),
        ("s3://b", "s3://b", True),
        ("file:///", "file:///data", True),
        ("file:///data", "file:///database", False),
        ("s3://b/t", "file:///b/t", False),
    ],
)
def test_dataset_contains(dataset: str, asset_dataset: str, contained: bool) -> None:
    assert dataset_contains(dataset, asset_dataset) is contained


def test_a_read_of_a_prefix_covers_the_objects_below_it() -> None:
    read = dataset_urn("s3a://b/partner/")
    assert dataset_contains(read, s3_dataset_urn_for_key("b", "partner/feeds/x.csv"))
    assert not dataset_contains(read, s3_dataset_urn_for_key("b", "partnerX/feeds/x.csv"))


def test_containment_compares_collapsed_dataset_urns_not_raw_keys() -> None:
    read = dataset_urn("s3a://b/a/b")
    key = "a//b/x.csv"
    assert not s3_file_urn("b", key).startswith(read + "/")  # the raw key is not below it
    assert dataset_contains(read, s3_dataset_urn_for_key("b", key))


# --- Snowflake ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "parts"),
    [
        ('db.sch."My.Tab"', ["DB", "SCH", "My.Tab"]),
        ("analytics.public.orders", ["ANALYTICS", "PUBLIC", "ORDERS"]),
        ("Analytics.Public.Orders", ["ANALYTICS", "PUBLIC", "ORDERS"]),
        ('"analytics"."public"."orders"', ["analytics", "public", "orders"]),
        ('"a""b"', ['a"b']),
        ('""""', ['"']),
        ('"a"""', ['a"']),
        ('"a."".b"', ['a.".b']),
        ('"Has Space".s.t', ["Has Space", "S", "T"]),
        ('"a.b.c"', ["a.b.c"]),
        ("orders", ["ORDERS"]),
        ("sch.orders", ["SCH", "ORDERS"]),
        ("my_tab$1", ["MY_TAB$1"]),
        ('"日本".s.t', ["日本", "S", "T"]),
    ],
)
def test_parse_snowflake_name_from_sql_text(text: str, parts: list[str]) -> None:
    assert parse_snowflake_name(text) == parts


@pytest.mark.parametrize(
    ("text", "parts"),
    [
        ("Analytics.Public.orders", ["Analytics", "Public", "orders"]),
        ('DB.SCH."My.Tab"', ["DB", "SCH", "My.Tab"]),
        ('DB.SCH."a""b"', ["DB", "SCH", 'a"b']),
        ("DB.SCH.my table", ["DB", "SCH", "my table"]),
    ],
)
def test_parse_snowflake_name_from_metadata_keeps_stored_case(text: str, parts: list[str]) -> None:
    assert parse_snowflake_name(text, from_metadata=True) == parts


@pytest.mark.parametrize(
    "text",
    [
        "",
        "a..b",
        ".a",
        "a.",
        "a.b.c.d",
        '"abc',
        'a."b',
        'ab"c',
        '"a"b',
        'a."b"c',
        '""',
        '"a".""',
        '"a""',  # the last quote is escaped, so the part never closes
    ],
)
def test_malformed_snowflake_names_are_named(text: str) -> None:
    with pytest.raises(IdentityError, match=re.escape(repr(text))):
        parse_snowflake_name(text)


def test_quote_snowflake_name() -> None:
    assert quote_snowflake_name(["DB", "PUBLIC", "ORDERS_1$"]) == "DB.PUBLIC.ORDERS_1$"
    assert quote_snowflake_name(["DB", "sch", 'a"b']) == 'DB."sch"."a""b"'
    assert quote_snowflake_name(["My.Tab"]) == '"My.Tab"'
    assert quote_snowflake_name(["1ST"]) == '"1ST"'  # cannot start with a digit unquoted
    assert quote_snowflake_name(["has space"]) == '"has space"'


@pytest.mark.parametrize(
    ("name", "urn"),
    [
        ("analytics.public.orders", "snowflake://org-acct/ANALYTICS.PUBLIC.ORDERS"),
        ('analytics.public."Orders"', "snowflake://org-acct/ANALYTICS.PUBLIC.Orders"),
        ('db.s."My.Tab"', 'snowflake://org-acct/DB.S."My.Tab"'),
        ('db.s."a""b"', 'snowflake://org-acct/DB.S."a""b"'),
        ('"my.db".s.t', 'snowflake://org-acct/"my.db".S.T'),
        ('db.s."has space"', "snowflake://org-acct/DB.S.has space"),
    ],
)
def test_snowflake_urn_from_sql_text(name: str, urn: str) -> None:
    assert snowflake_urn("Org-Acct", name) == urn


def test_snowflake_account_is_lower_cased() -> None:
    assert snowflake_urn("MyOrg-MyAccount", "d.s.t") == "snowflake://myorg-myaccount/D.S.T"


def test_snowflake_urn_from_metadata_uses_names_as_stored() -> None:
    urn = snowflake_urn("acct", "Analytics.Public.orders", from_metadata=True)
    assert urn == "snowflake://acct/Analytics.Public.orders"
    quoted = snowflake_urn("acct", 'DB.S."My.Tab"', from_metadata=True)
    assert quoted == 'snowflake://acct/DB.S."My.Tab"'


def test_sql_text_and_metadata_spellings_of_one_table_meet() -> None:
    from_sql = snowflake_urn("acct", "analytics.public.orders")
    from_history = snowflake_urn("acct", "ANALYTICS.PUBLIC.ORDERS", from_metadata=True)
    assert from_sql == from_history == "snowflake://acct/ANALYTICS.PUBLIC.ORDERS"
    quoted_sql = snowflake_urn("acct", 'analytics.public."orders"')
    stored = snowflake_urn("acct", "ANALYTICS.PUBLIC.orders", from_metadata=True)
    assert quoted_sql == stored == "snowflake://acct/ANALYTICS.PUBLIC.orders"


def test_unqualified_snowflake_names_take_the_query_database_and_schema() -> None:
    one = snowflake_urn("acct", "orders", database="ANALYTICS", schema="Sales")
    assert one == "snowflake://acct/ANALYTICS.Sales.ORDERS"  # database and schema as stored
    two = snowflake_urn("acct", "public.orders", database="ANALYTICS", schema="IGNORED")
    assert two == "snowflake://acct/ANALYTICS.PUBLIC.ORDERS"
    three = snowflake_urn("acct", "db.public.orders", database="X", schema="Y")
    assert three == "snowflake://acct/DB.PUBLIC.ORDERS"
    dotted = snowflake_urn("acct", "t", database="my.db", schema="S")
    assert dotted == 'snowflake://acct/"my.db".S.T'


@pytest.mark.parametrize(
    ("name", "database", "schema"),
    [
        ("orders", None, None),
        ("orders", "DB", None),
        ("orders", None, "S"),
        ("orders", "", "S"),
        ("public.orders", None, "S"),
    ],
)
def test_unqualified_names_without_context_are_named(
    name: str, database: str | None, schema: str | None
) -> None:
    with pytest.raises(IdentityError, match=re.escape(repr(name))):
        snowflake_urn("acct", name, database=database, schema=schema)


@pytest.mark.parametrize("account", ["", "org/acct"])
def test_bad_snowflake_account_is_named(account: str) -> None:
    with pytest.raises(IdentityError, match=re.escape(repr(account))):
        snowflake_urn(account, "d.s.t")


def test_snowflake_urn_from_parts_never_splits_a_stored_name() -> None:
    urn = snowflake_urn_from_parts("Acct", "DB", "PUBLIC", "My.Tab")
    assert urn == 'snowflake://acct/DB.PUBLIC."My.Tab"'
    assert snowflake_urn_from_parts("a", "D", "S", "t") == "snowflake://a/D.S.t"
    with pytest.raises(IdentityError, match=re.escape("['D', '', 't']")):
        snowflake_urn_from_parts("a", "D", "", "t")


def test_stage_placeholder_urn() -> None:
    urn = snowflake_stage_placeholder_urn("Acct", "landing", database="RAW", schema="S")
    assert urn == "snowflake://acct/@RAW.S.landing"  # from metadata by default: as stored
    assert (
        snowflake_stage_placeholder_urn("acct", "@landing", database="RAW", schema="S")
        == "snowflake://acct/@RAW.S.landing"
    )
    assert (
        snowflake_stage_placeholder_urn(
            "acct", "@landing", database="RAW", schema="S", from_metadata=False
        )
        == "snowflake://acct/@RAW.S.LANDING"
    )
    assert (
        snowflake_stage_placeholder_urn("acct", 'raw.s."My.Stage"', from_metadata=False)
        == 'snowflake://acct/@RAW.S."My.Stage"'
    )
    with pytest.raises(IdentityError, match=re.escape("'@landing'")):
        snowflake_stage_placeholder_urn("acct", "@landing")


# --- Spark, OpenLineage -------------------------------------------------------------------


def test_spark_table_urn() -> None:
    assert spark_table_urn("spark_catalog", "sales", "orders") == (
        "spark://spark_catalog/sales.orders"
    )
    with pytest.raises(IdentityError, match="empty table"):
        spark_table_urn("spark_catalog", "sales", "")


@pytest.mark.parametrize(
    ("namespace", "name", "urn"),
    [
        ("s3://b", "sales/orders", "s3://b/sales/orders"),
        ("s3a://b", "/sales/orders/dt=2024-01-01/", "s3://b/sales/orders"),
        ("s3://b/", "//sales//orders", "s3://b/sales/orders"),
        ("s3n://b", "", "s3://b"),
        ("file", "/tmp/out/part=1", "file:///tmp/out"),
        ("file", "tmp/out", "file:///tmp/out"),
        ("file://", "/tmp/out", "file:///tmp/out"),
        (
            "snowflake://Org-Acct",
            "ANALYTICS.PUBLIC.orders",
            "snowflake://org-acct/ANALYTICS.PUBLIC.orders",
        ),
        ("snowflake://org-acct", 'DB.S."My.Tab"', 'snowflake://org-acct/DB.S."My.Tab"'),
        ("postgres://db:5432", "shop.public.orders", "postgres://db:5432/shop.public.orders"),
        ("kafka://broker:9092/", "//topic", "kafka://broker:9092/topic"),
        ("bigquery", "project.dataset.table", "bigquery:///project.dataset.table"),
        ("my-namespace", "/raw/orders", "my-namespace:///raw/orders"),
        ("hdfs://nn:8020", "/data//x/", "hdfs://nn:8020/data//x/"),  # only s3 and file fold
    ],
)
def test_openlineage_urn(namespace: str, name: str, urn: str) -> None:
    assert openlineage_urn(namespace, name) == urn
    assert system_of(urn)  # every urn it makes is one the graph can take


@pytest.mark.parametrize("namespace", ["my namespace", "ns\x01", "", "://x", "a b://c"])
def test_a_namespace_that_makes_no_urn_is_an_identity_error(namespace: str) -> None:
    with pytest.raises(IdentityError):
        openlineage_urn(namespace, "raw/orders")


def test_openlineage_dataset_meets_the_listing() -> None:
    seen = openlineage_urn("s3a://lake", "sales/orders/dt=2024-01-01")
    assert seen == s3_dataset_urn_for_key("lake", "sales/orders/dt=2024-01-01/part-0.parquet")
    assert openlineage_urn("s3://lake", "logs/2024/01/31", DATES) == "s3://lake/logs"


@pytest.mark.parametrize(("namespace", "name"), [("", "x"), ("postgres://db", "/")])
def test_openlineage_urn_refuses_empty_parts(namespace: str, name: str) -> None:
    with pytest.raises(IdentityError, match=re.escape(repr(namespace))):
        openlineage_urn(namespace, name)


def test_openlineage_job_urn() -> None:
    assert openlineage_job_urn("airflow", "daily.load_orders") == (
        "openlineage://airflow/daily.load_orders"
    )
    with pytest.raises(IdentityError, match="empty job name"):
        openlineage_job_urn("airflow", "")


# --- columns ------------------------------------------------------------------------------


def test_column_urn_and_split() -> None:
    urn = column_urn("snowflake://acct/D.S.T", "ID")
    assert urn == "snowflake://acct/D.S.T#ID"
    assert split_column_urn(urn) == ("snowflake://acct/D.S.T", "ID")


def test_column_urn_splits_at_the_last_hash() -> None:
    urn = column_urn("s3://b/a#b/c#d.csv", "amount")
    assert urn == "s3://b/a#b/c#d.csv#amount"
    assert split_column_urn(urn) == ("s3://b/a#b/c#d.csv", "amount")


@pytest.mark.parametrize("urn", ["s3://b/x", "s3://b/x#", "#col", ""])
def test_split_column_urn_refuses_non_column_urns(urn: str) -> None:
    with pytest.raises(IdentityError, match=re.escape(repr(urn))):
        split_column_urn(urn)


def test_column_name_with_hash_is_refused() -> None:
    with pytest.raises(IdentityError, match=re.escape("'a#b'")):
        column_urn("snowflake://acct/D.S.T", "a#b")


# --- transformations ----------------------------------------------------------------------


def _sha16(literal_json: str) -> str:
    return hashlib.sha256(literal_json.encode("utf-8")).hexdigest()[:16]


def test_query_transformation_with_parameterized_hash() -> None:
    urn = snowflake_query_transformation_urn("Acct", "a1b2c3", ["x"], ["y"])
    assert urn == "snowflake://acct/query/a1b2c3"


def test_query_transformation_without_hash_hashes_sorted_targets_then_sorted_sources() -> None:
    targets = ["snowflake://acct/D.S.T2", "snowflake://acct/D.S.T1"]
    sources = ["snowflake://acct/D.S.B", "s3://b/raw", "snowflake://acct/D.S.A"]
    expected_json = (
        '["snowflake://acct/D.S.T1", "snowflake://acct/D.S.T2", '
        '"s3://b/raw", "snowflake://acct/D.S.A", "snowflake://acct/D.S.B"]'
    )
    expected = "snowflake://acct/query/" + _sha16(expected_json)
    assert snowflake_query_transformation_urn("acct", None, targets, sources) == expected
    assert snowflake_query_transformation_urn("acct", "", iter(targets), iter(sources)) == expected
    shuffled = snowflake_query_transformation_urn(
        "acct", None, reversed(targets), [*sources[1:], sources[0], sources[0]]
    )
    assert shuffled == expected  # order and repeats do not change the identity


def test_query_transformation_hash_uses_default_json_escaping() -> None:
    expected = "snowflake://acct/query/" + _sha16('["s3://b/caf\\u00e9", "snowflake://acct/D.S.T"]')
    urn = snowflake_query_transformation_urn(
        "acct", None, ["s3://b/caf\u00e9"], ["snowflake://acct/D.S.T"]
    )
    assert urn == expected


def test_query_transformation_hash_tells_targets_from_sources_by_order_only() -> None:
    a, b = "snowflake://acct/D.S.A", "snowflake://acct/D.S.B"
    forward = snowflake_query_transformation_urn("acct", None, [a], [b])
    backward = snowflake_query_transformation_urn("acct", None, [b], [a])
    assert forward != backward
    # docs/identity.md's flat list has no boundary between targets and sources, so these two
    # different jobs share one identity. Kept as specified; reported to the lead.
    assert snowflake_query_transformation_urn("acct", None, [a, b], []) == forward


def test_spark_transformation_urn() -> None:
    urn = spark_transformation_urn("nightly-etl", "s3://lake/marts/orders")
    assert urn == "spark://nightly-etl/s3://lake/marts/orders"
    with pytest.raises(IdentityError, match="empty app name"):
        spark_transformation_urn("", "s3://lake/marts/orders")


# --- reading urns back --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("urn", "system"),
    [
        ("s3://b/x.csv", "s3"),
        ("s3://b", "s3"),
        ("file:///tmp/x", "file"),
        ("snowflake://acct/D.S.T", "snowflake"),
        ("snowflake://acct/D.S.T#ID", "snowflake"),
        ("spark://cat/db.t", "spark"),
        ("openlineage://airflow/dag.task", "openlineage"),
        ("postgres://db:5432/shop.public.orders", "postgres"),
    ],
)
def test_system_of(urn: str, system: str) -> None:
    assert system_of(urn) == system


@pytest.mark.parametrize("urn", ["", "orders", "/tmp/x", "bigquery/p.d.t"])
def test_system_of_refuses_non_urns(urn: str) -> None:
    with pytest.raises(IdentityError, match=re.escape(repr(urn))):
        system_of(urn)


@pytest.mark.parametrize(
    ("urn", "name"),
    [
        ("s3://b/sales/orders/x.csv", "x.csv"),
        ("s3://b/sales/orders", "orders"),
        ("s3://b/dir/", "dir"),
        ("s3://b", "b"),
        ("file:///tmp/out", "out"),
        ("file:///", "/"),
        ("snowflake://acct/D.S.ORDERS", "ORDERS"),
        ('snowflake://acct/D.S."My.Tab"', "My.Tab"),
        ('snowflake://acct/D.S."a""b"', 'a"b'),
        ("snowflake://acct/D.S.has space", "has space"),
        ("snowflake://acct/@RAW.S.landing", "@landing"),
        ("snowflake://acct/query/01abc", "01abc"),
        ("spark://cat/sales.orders", "sales.orders"),
        ("openlineage://airflow/daily.load", "daily.load"),
    ],
)
def test_name_of(urn: str, name: str) -> None:
    assert name_of(urn) == name


# --- properties ---------------------------------------------------------------------------

ODD = "ab01=é\u0301 %+\"'#.-_"
segments = st.text(alphabet=ODD, min_size=1, max_size=6)
hive_segments = st.builds(lambda k, v: f"{k}={v}", st.sampled_from(["dt", "k", "a b"]), segments)
dates = st.just("2024/01/31")
any_segment = st.one_of(segments, hive_segments, dates, st.just(""))  # "" makes '//'
buckets = st.text(alphabet="abc019.-", min_size=1, max_size=8)
rules_choice = st.sampled_from([NO_FOLD_RULES, DATES, FoldRules((r"\d{2}", r"dt=.*"))])


@st.composite
def referenced_paths(draw: st.DrawFn) -> str:
    body = "/".join(draw(st.lists(any_segment, max_size=6)))
    trailing = draw(st.sampled_from(["", "/", "//"]))
    path = body + trailing
    prefix = draw(
        st.sampled_from(["s3://", "s3a://", "s3n://", "S3A://", "/", "file:/", "file:///"])
    )
    if prefix == "file:/":
        return prefix + path.lstrip("/")  # "file://x" would name a host
    if prefix in ("/", "file:///"):
        return prefix + path
    return prefix + draw(buckets) + "/" + path


@given(referenced_paths(), rules_choice)
def test_dataset_urn_is_idempotent(path: str, rules: FoldRules) -> None:
    once = dataset_urn(path, rules)
    assert dataset_urn(once, rules) == once


@given(referenced_paths(), rules_choice)
def test_dataset_urns_are_collapsed_and_folded(path: str, rules: FoldRules) -> None:
    urn = dataset_urn(path, rules)
    assert urn.startswith(("s3://", "file:///"))
    rest = urn.split("://", 1)[1]
    assert "//" not in rest
    assert urn == "file:///" or not urn.endswith("/")
    folded = rest.split("/")[1:]
    assert not any("=" in segment and not segment.startswith("=") for segment in folded)


@given(buckets, st.lists(any_segment, max_size=6), rules_choice)
def test_s3a_s3n_and_s3_name_one_dataset(bucket: str, parts: list[str], rules: FoldRules) -> None:
    body = "/".join(parts)
    urns = {dataset_urn(f"{scheme}://{bucket}/{body}", rules) for scheme in ("s3", "s3a", "s3n")}
    assert len(urns) == 1


keys = st.builds(
    lambda directories, file_name: "/".join([*directories, file_name]),
    st.lists(any_segment, max_size=6),
    st.one_of(segments, hive_segments),
)


@given(buckets, keys, rules_choice)
def test_object_dataset_is_the_dataset_of_its_directory(
    bucket: str, key: str, rules: FoldRules
) -> None:
    directory = key.rpartition("/")[0]
    expected = dataset_urn(f"s3://{bucket}/{directory}", rules)
    assert s3_dataset_urn_for_key(bucket, key, rules) == expected


@given(buckets, keys, st.sampled_from([NO_FOLD_RULES, FoldRules((r"\d{2}",))]))
def test_every_ancestor_directory_contains_the_object(
    bucket: str, key: str, rules: FoldRules
) -> None:
    # Holds when every fold rule spans one segment (Hive, single-segment patterns); a
    # multi-segment pattern is cut by a partial reference such as s3://b/logs/2024.
    own = s3_dataset_urn_for_key(bucket, key, rules)
    assert dataset_contains(own, own)
    directories = key.split("/")[:-1]
    for depth in range(len(directories) + 1):
        ancestor = dataset_urn(f"s3://{bucket}/" + "/".join(directories[:depth]), rules)
        assert dataset_contains(ancestor, own)


@given(buckets, st.lists(segments, max_size=5), st.one_of(segments, hive_segments), rules_choice)
def test_object_lies_under_its_dataset(
    bucket: str, directories: list[str], file_name: str, rules: FoldRules
) -> None:
    key = "/".join([*directories, file_name])  # no empty segments: the raw key is comparable
    assert dataset_contains(s3_dataset_urn_for_key(bucket, key, rules), s3_file_urn(bucket, key))


@given(st.text(min_size=1))
def test_inventory_key_decoding_inverts_form_encoding(key: str) -> None:
    assert decode_inventory_key(quote_plus(key, safe="/")) == key


snowflake_parts = st.lists(st.text(min_size=1, max_size=8), min_size=1, max_size=3)


@given(snowflake_parts)
def test_snowflake_quote_parse_round_trip(parts: list[str]) -> None:
    assert parse_snowflake_name(quote_snowflake_name(parts)) == parts


@given(st.text(min_size=1), st.text(min_size=1), st.text(min_size=1))
def test_snowflake_urn_splits_back_into_its_parts(database: str, schema: str, name: str) -> None:
    urn = snowflake_urn_from_parts("acct", database, schema, name)
    object_name = urn.removeprefix("snowflake://acct/")
    assert parse_snowflake_name(object_name, from_metadata=True) == [database, schema, name]
    assert name_of(urn) == name
    assert snowflake_urn("acct", object_name, from_metadata=True) == urn


@given(st.text(min_size=1), st.text(alphabet=st.characters(blacklist_characters="#"), min_size=1))
def test_column_urn_round_trip(asset: str, column: str) -> None:
    assert split_column_urn(column_urn(asset, column)) == (asset, column)


ERRORS: list[tuple[Callable[[], object], str]] = [
    (lambda: s3_file_urn("", "k"), "''"),
    (lambda: s3_file_urn("a/b", "k"), "'a/b'"),
    (lambda: s3_file_urn("b", ""), "'b'"),
    (lambda: s3_dataset_urn_for_key("a/b", "k"), "'a/b'"),
    (lambda: s3_dataset_urn_for_key("b", ""), "'b'"),
]


@pytest.mark.parametrize(("call", "named"), ERRORS)
def test_s3_errors_name_the_input(call: Callable[[], object], named: str) -> None:
    with pytest.raises(IdentityError, match=re.escape(named)):
        call()


def test_name_of_a_table_in_a_database_called_query() -> None:
    assert name_of(snowflake_urn_from_parts("acct", "query/x", "S", "T")) == "T"


def test_a_table_never_shares_its_urn_with_a_stage_placeholder() -> None:
    table = snowflake_urn_from_parts("acct", "@RAW", "S", "LANDING")
    stage = snowflake_stage_placeholder_urn("acct", "LANDING", database="RAW", schema="S")
    assert table == 'snowflake://acct/"@RAW".S.LANDING'
    assert stage == "snowflake://acct/@RAW.S.LANDING"
    assert name_of(table) == "LANDING"
    assert name_of(stage) == "@LANDING"


# --- path aliases (mounted or mirrored buckets) --------------------------------------------

MOUNT = FoldRules(
    aliases=(("file:///mnt/s3/raw", "s3://raw"), ("/mnt/s3/raw/deep", "s3://other/x"))
)


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/mnt/s3/raw/events/dt=2024-01-01/part-0.json", "s3://raw/events"),
        ("file:///mnt/s3/raw/events/dt=2024-01-01", "s3://raw/events"),
        ("file:/mnt/s3/raw//events/", "s3://raw/events"),
        ("/mnt/s3/raw", "s3://raw"),
        ("/mnt/s3/raw/deep/er", "s3://other/x/er"),  # the longest alias wins
        ("/mnt/s3/rawer/events", "file:///mnt/s3/rawer/events"),  # segment boundary
        ("s3a://raw/events", "s3://raw/events"),
    ],
)
def test_aliases_rewrite_mounted_paths_before_folding(path: str, expected: str) -> None:
    assert dataset_urn(path, MOUNT) == expected


def test_bad_alias_is_refused() -> None:
    with pytest.raises(IdentityError, match="relative file path"):
        FoldRules(aliases=(("file:relative", "s3://b"),))


# --- dbt -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("namespace", "parts", "urn"),
    [
        ("postgres://db:5432", ["shop", "public", "orders"], "postgres://db:5432/shop.public.orders"),
        ("postgres://db:5432/", ["shop", "public", "orders"], "postgres://db:5432/shop.public.orders"),
        ("bigquery", ["proj", "sales", "orders"], "bigquery:///proj.sales.orders"),
        ("bigquery://", ["proj", "sales", "orders"], "bigquery:///proj.sales.orders"),
        ("duckdb:///data/dev.duckdb", ["dev", "main", "t"], "duckdb:///data/dev.duckdb/dev.main.t"),
    ],
)  # fmt: skip
def test_warehouse_table_urn(namespace: str, parts: list[str], urn: str) -> None:
    assert identity.warehouse_table_urn(namespace, parts) == urn
    assert system_of(urn) == namespace.partition(":")[0]


@pytest.mark.parametrize(
    ("namespace", "parts"), [("", ["a", "b"]), ("pg://h", []), ("pg://h", ["a", ""])]
)
def test_warehouse_table_urn_refuses_empty_parts(namespace: str, parts: list[str]) -> None:
    with pytest.raises(IdentityError):
        identity.warehouse_table_urn(namespace, parts)


def test_dbt_transformation_urn() -> None:
    urn = identity.dbt_transformation_urn("shop", "model.shop.fct_sales")
    assert urn == "dbt://shop/model.shop.fct_sales"
    assert system_of(urn) == "dbt" and name_of(urn) == "model.shop.fct_sales"
    with pytest.raises(IdentityError):
        identity.dbt_transformation_urn("", "model.shop.x")


# --- OpenLineage names back from urns (the HTTP API answers in them) ------------------------


@given(referenced_paths(), rules_choice)
def test_openlineage_name_inverts_dataset_urns(path: str, rules: FoldRules) -> None:
    urn = dataset_urn(path, rules)
    namespace, name = identity.openlineage_name(urn)
    assert identity.openlineage_urn(namespace, name, rules) == urn
    assert identity.openlineage_urns(namespace, name, rules)[0] == urn


@given(st.text(min_size=1), st.text(min_size=1), st.text(min_size=1))
def test_openlineage_name_inverts_snowflake_urns(database: str, schema: str, name: str) -> None:
    urn = snowflake_urn_from_parts("Org-Acct", database, schema, name)
    namespace, ol_name = identity.openlineage_name(urn)
    assert namespace == "snowflake://org-acct"
    assert identity.openlineage_urn(namespace, ol_name) == urn


@given(
    st.text(min_size=1).filter(lambda t: "/" not in t and ":" not in t),
    st.text(min_size=1).filter(lambda t: t.lstrip("/") != ""),
)
def test_openlineage_name_inverts_other_platforms(host: str, name: str) -> None:
    urn = identity.openlineage_urn(f"postgres://{host}", name)
    namespace, ol_name = identity.openlineage_name(urn)
    assert urn in identity.openlineage_urns(namespace, ol_name)


@pytest.mark.parametrize(
    "urn",
    [
        "s3://b/raw/dt=2024-01-01/part 1.csv ",  # a listed object: kept exactly, never folded
        "s3://b/a//b#c",
        "snowflake://acct/@DB.S.LANDING",  # a stage: no event names it this way
        "spark://catalog/db.t\u2028x",
        "file:///tmp/ é/\x01",
    ],
)
def test_every_urn_is_found_again_from_its_openlineage_name(urn: str) -> None:
    assert urn in identity.openlineage_urns(*identity.openlineage_name(urn))


@given(st.text(min_size=1), st.text(min_size=1))
def test_openlineage_jobs_round_trip_with_their_stored_name(namespace: str, name: str) -> None:
    urn = identity.openlineage_job_urn(namespace, name)
    assert identity.openlineage_job_name(urn, name) == (namespace, name)
    assert urn in identity.openlineage_job_urns(namespace, name)


@pytest.mark.parametrize(
    ("urn", "name"),
    [
        ("snowflake://acct/query/abc123", "abc123"),
        ("spark://my app/s3://b/out", "out"),
    ],
)
def test_other_transformations_are_jobs_under_their_authority(urn: str, name: str) -> None:
    namespace, job = identity.openlineage_job_name(urn, name)
    assert "://" in namespace
    assert urn in identity.openlineage_job_urns(namespace, job)
