"""Schema versions folded from sightings (lineagegraph.schemas): pure, no store."""

from __future__ import annotations

import itertools
import random

from hypothesis import given
from hypothesis import strategies as st

from lineagegraph.schemas import SchemaLog, SchemaSeen, Version, changes, merged, schema_hash

A: tuple[tuple[str, str | None], ...] = (("id", "int"), ("amount", "decimal"))
B: tuple[tuple[str, str | None], ...] = (("id", "bigint"),)
SCHEMAS = {"A": A, "B": B}


def fold(sightings: list[tuple[int, str]]) -> list[tuple[int, int, str]]:
    log = SchemaLog()
    for at, name in sightings:
        log.add(SchemaSeen("u", "s", at, SCHEMAS[name]))
    names = {schema_hash(f): n for n, f in SCHEMAS.items()}
    return [(v.at, v.last, names[v.hash]) for v in log.versions.get(("u", "s"), [])]


def runs(sightings: list[tuple[int, str]]) -> list[tuple[int, int, str]]:
    """What sightings in time order say: a version per run of one schema."""
    out: list[tuple[int, int, str]] = []
    for name, group in itertools.groupby(sorted(set(sightings)), key=lambda s: s[1]):
        times = [at for at, _ in group]
        out.append((times[0], times[-1], name))
    return out


SIGHTING = st.tuples(st.integers(0, 50), st.sampled_from(["A", "B"]))
SIGHTINGS = st.lists(SIGHTING, max_size=30, unique_by=lambda s: s[0])  # one schema at a time


@given(SIGHTINGS)
def test_in_time_order_a_version_per_run_of_one_schema(sightings: list[tuple[int, str]]) -> None:
    assert fold(sorted(sightings)) == runs(sightings)


@given(SIGHTINGS, st.randoms())
def test_reports_again_in_any_order_change_nothing(
    sightings: list[tuple[int, str]], rnd: random.Random
) -> None:
    """A rerun or a replayed window: every sighting again, shuffled, leaves the versions."""
    first = fold(sorted(sightings))
    again = sorted(sightings) + rnd.sample(sightings, len(sightings))
    assert fold(again) == first


def test_a_late_report_moves_a_version_back_or_splits_a_run() -> None:
    assert fold([(10, "B"), (5, "B"), (1, "A")]) == [(1, 1, "A"), (5, 10, "B")]
    # A at 3 inside B's run from 2 to 8: the reports between are not kept, so B comes back at 8
    assert fold([(2, "B"), (8, "B"), (3, "A")]) == [(2, 2, "B"), (3, 3, "A"), (8, 8, "B")]
    # two schemas at one time: the larger hash, whatever the order
    assert fold([(4, "A"), (4, "B")]) == fold([(4, "B"), (4, "A")])


def test_merged_and_changes() -> None:
    held = [Version(1, 2, schema_hash(A), A)]
    new = merged(held, [Version(5, 6, schema_hash(B), B)])
    assert [v.at for v in new] == [1, 5]
    (change,) = changes("s", new)
    assert change.dropped == (("amount", "decimal"),)
    assert change.retyped == (("id", "int", "bigint"),)
    assert change.breaking and change.summary() == "-amount, id: int -> bigint"
    assert merged(new, new) == new
    assert schema_hash((("ID", "int"),)) != schema_hash((("id", "int"),))
    assert schema_hash((("id", "INT"), ("x", None))) == schema_hash((("x", None), ("id", "int")))
