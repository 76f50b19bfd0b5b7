"""Which columns an asset had dropped (lineagegraph.questions.schemas.dropped): pure, from
each source's schema versions, as the explorer's column view asks it."""

from __future__ import annotations

from lineagegraph.questions.schemas import dropped
from lineagegraph.schemas import Version, schema_hash


def v(at: int, *names: str) -> Version:
    fields = tuple((n, "int") for n in names)
    return Version(at, at, schema_hash(fields), fields)


def test_a_column_goes_when_the_last_source_that_listed_it_drops_it() -> None:
    dbt = [v(1, "id", "coupon"), v(5, "id")]
    snowflake = [v(2, "id", "coupon"), v(9, "id")]
    assert dropped({"dbt": dbt}) == {"coupon": 5}
    assert dropped({"dbt": dbt, "snowflake": snowflake[:1]}) == {}  # snowflake still lists it
    assert dropped({"dbt": dbt, "snowflake": snowflake}) == {"coupon": 9}
    # a source that never listed it does not keep it
    assert dropped({"dbt": dbt, "openlineage": [v(3, "id"), v(7, "id", "x")]}) == {"coupon": 5}


def test_a_column_dropped_and_added_again_stands_and_a_second_drop_counts() -> None:
    back = [v(1, "id", "coupon"), v(2, "id"), v(3, "id", "coupon")]
    assert dropped({"s": back}) == {}
    assert dropped({"s": [*back, v(4, "id")]}) == {"coupon": 4}
    assert dropped({"s": []}) == {} and dropped({}) == {}
