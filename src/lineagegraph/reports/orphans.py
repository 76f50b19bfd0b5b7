"""The orphaned-S3 report and the S3 cost report (docs/orphans.md).

Graph statements (cypher/orphans_*.cypher) tally the objects per bucket, dataset, storage class
and status (lineagegraph.reports.tally); run_report prices those tallies
(lineagegraph.values.pricing), rolls them up to the rows asked for, ranks them
(lineagegraph.reports.ranking), says what limits the figures, and builds the report
(lineagegraph.reports.presentation).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lineagegraph import gc_pause
from lineagegraph.graph.store import GraphStore
from lineagegraph.reports.options import GROUPINGS, ReportOptions
from lineagegraph.reports.presentation import LAYOUT, Report, listing
from lineagegraph.reports.ranking import rank
from lineagegraph.reports.tally import ROLLUP, Sums, bucket_of, roll_up, tally_of, usage_records
from lineagegraph.store_check import require_assets
from lineagegraph.values.pricing import Usage, monthly_costs

INTELLIGENT_TIERING = "INTELLIGENT_TIERING"


@gc_pause.paused()  # hundreds of thousands of rows: see lineagegraph.gc_pause
def run_report(store: GraphStore, options: ReportOptions) -> Report:
    """Query the graph (usage_records), price what it returns and build the report."""
    records = usage_records(store, options)
    if not records:
        require_assets(store, "orphans_shapes", "S3 objects", "s3")
    usages = [
        Usage.of(r.get("priced_as") or r["storage_class"], tally_of(r), options.prices)
        for r in records
    ]
    costing = monthly_costs(usages, options.prices)
    key, denominator = GROUPINGS[options.by], costing.denominator
    parts = [Sums.of(r, u, c) for r, u, c in zip(records, usages, costing.numerators, strict=True)]
    by_dataset = roll_up(records, parts, GROUPINGS["dataset"])
    by_row = roll_up(records, parts, key, use_up=True)  # last: it uses the parts up
    everything = Sums()
    for sums in by_dataset.values():
        everything.add(sums)
    rows, datasets = rank(by_row, options.sort), rank(by_dataset)
    warnings = [
        f"storage class {name!r} ({objects:,} object{'s' * (objects != 1)}) is not in the "
        f"price table {options.price_table}; priced as {options.prices.priced_as(name)[0]}"
        for name, objects in sorted(costing.unpriced.items())
    ]
    warnings += _rollup_warnings(store, options)
    rows_of, top_of, totals_of = LAYOUT[options.kind]
    if options.by == "object":
        rows_of = (*rows_of, "harvested_as")
    [totals] = listing([((), everything)], totals_of, denominator)
    readers = {r["dataset"]: r["readers"] for r in records}
    columns, top_columns = [*key, *rows_of], [*GROUPINGS["dataset"], *top_of]
    return Report(
        options=options,
        columns=reader_columns(columns, key),
        rows=with_readers(listing(rows, rows_of, denominator), key, readers, columns),
        top_columns=reader_columns(top_columns, GROUPINGS["dataset"]),
        top_rows=with_readers(
            listing(datasets, top_of, denominator, options.top_n),
            GROUPINGS["dataset"],
            readers,
            top_columns,
        ),
        totals=dict(zip(totals_of, totals, strict=True)),
        warnings=warnings,
        notes=_tier_notes(usages) + _rollup_notes(records, options),
    )


def reader_columns(columns: list[str], key: Sequence[str]) -> list[str]:
    """The columns of rows keyed by dataset with `readers` just after `last_read` (see
    with_readers); others as they are: a bucket's or a class's readers would be a list."""
    if "dataset" not in key:
        return columns
    place = columns.index("last_read") + 1
    return [*columns[:place], "readers", *columns[place:]]


def with_readers(
    rows: list[list[Any]], key: Sequence[str], readers: dict[str, str | None], columns: list[str]
) -> list[list[Any]]:
    """Rows keyed by dataset with its readers (tally.readers_text) where reader_columns puts
    them; others as they are."""
    if "dataset" not in key:
        return rows
    place, at = columns.index("last_read") + 1, list(key).index("dataset")
    for row in rows:
        row.insert(place, readers.get(row[at]))
    return rows


def _tier_notes(usages: Sequence[Usage]) -> list[str]:
    """Say when Intelligent-Tiering objects were priced without their access tier."""
    untiered = sum(
        u.objects for u in usages if u.storage_class == INTELLIGENT_TIERING and u.objects
    )
    if not untiered:
        return []
    return [
        f"{untiered:,} Intelligent-Tiering object{'s' * (untiered != 1)} without an access tier "
        "(an S3 listing, or an inventory without IntelligentTieringAccessTier) priced as "
        "Frequent Access: an upper bound"
    ]


def _rollup_notes(records: Sequence[dict[str, Any]], options: ReportOptions) -> list[str]:
    """Say which datasets were harvested as roll-ups when that limits what was asked: per-object
    rows (`--by object`), or deleted objects (`--include-deleted`)."""
    if options.by != "object" and not options.include_deleted:
        return []
    rolled = sorted({r["dataset"] for r in records if r["harvested_as"] == ROLLUP})
    if not rolled:
        return []
    buckets = sorted({bucket_of(urn) for urn in rolled})
    named = ", ".join(rolled[:5]) + (f" and {len(rolled) - 5:,} more" if len(rolled) > 5 else "")
    which = (
        f"the datasets harvested as S3 Inventory roll-ups (harvest s3-inventory --spark): "
        f"{len(rolled):,} in {', '.join(buckets)} ({named})"
    )
    notes = []
    if options.by == "object":
        notes.append(
            f"no per-object detail for {which}: their rows are per storage class, with no "
            "object and harvested_as 'rollup'; the totals include them. Harvest those scopes "
            "without --spark for per-object rows"
        )
    if options.include_deleted:
        notes.append(
            f"--include-deleted adds nothing for {which}: a newer inventory replaces a roll-up "
            "and does not say which objects went, so their figures are the newest inventory's "
            "as of this report's time"
        )
    return notes


def _rollup_warnings(store: GraphStore, options: ReportOptions) -> list[str]:
    """Roll-ups split excluded objects off when they were harvested: say so when this report
    asks for other exclusions."""
    asked = "\n".join(g.text for g in options.excludes)
    warnings = []
    for row in store.read("orphans_rollup_excludes", {"as_of": options.as_of}):
        if row["excludes"] != asked:
            used = ", ".join(str(row["excludes"] or "").split("\n")) or "none"
            warnings.append(
                f"{int(row['rollups']):,} inventory roll-ups were harvested with the exclusions "
                f"{used}, not this report's: their excluded objects follow those; harvest the "
                "inventory again with the same [reports] exclude to match"
            )
    return warnings
