"""A small S3 lake written the way harvesters write it, and report helpers over it.

Imported by the tests of this directory (pytest puts it on sys.path).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from lineagegraph.graph.store import GraphStore
from lineagegraph.graph.writer import GraphWriter
from lineagegraph.identity import dataset_urn, name_of, s3_dataset_urn_for_key, s3_file_urn
from lineagegraph.model import Asset, Flow, Item, PartOf, Scalar, Transformation
from lineagegraph.reports.options import DAY_MS, Kind, ReportOptions
from lineagegraph.reports.orphans import run_report
from lineagegraph.reports.presentation import Report
from lineagegraph.values.globs import exclusion_globs
from lineagegraph.values.pricing import GB, default_price_table, load_prices

T0 = 1_700_000_000_000  # 2023-11-14T22:13:20Z: when the lake was listed
DAY = DAY_MS
TABLE = "snowflake://acme/DB.S.T"


@dataclass
class Lake:
    """Objects, datasets and lineage, written through GraphWriter like the harvesters do."""

    store: GraphStore
    items: list[Item] = field(default_factory=list, repr=False)

    def obj(
        self,
        bucket: str,
        key: str,
        size: int = 100,
        storage_class: str = "STANDARD",
        modified: int = T0 - 30 * DAY,
        seen: int = T0,
    ) -> str:
        urn, dataset = s3_file_urn(bucket, key), s3_dataset_urn_for_key(bucket, key)
        props: dict[str, Scalar] = {
            "bucket": bucket,
            "key": key,
            "size": size,
            "storage_class": storage_class,
            "last_modified": modified,
        }
        self.items += [
            Asset(dataset, "Dataset", "s3", name_of(dataset), seen, {"bucket": bucket}),
            Asset(urn, "File", "s3", name_of(urn), seen, props),
            PartOf(urn, dataset),
        ]
        return urn

    def dataset(self, path: str) -> str:
        """A dataset another system references (a Spark or Snowflake path)."""
        urn = dataset_urn(path)
        self.items.append(Asset(urn, "Dataset", "s3", name_of(urn), T0))
        return urn

    def read(self, *urns: str, at: int, job: str = "spark://etl/report") -> None:
        self.items.append(Transformation(job, "spark", "report", f"run-{at}", at, reads=urns))

    def flow(self, src: str, at: int, dst: str = TABLE) -> None:
        self.items += [Asset(dst, "Table", "snowflake", name_of(dst), at), Flow(src, dst, at)]

    def write(self) -> Lake:
        writer = GraphWriter(self.store)
        writer.add_all(self.items)
        writer.flush()
        self.items = []
        return self

    def delete(self, urn: str, at: int) -> None:
        """What a complete scan that no longer sees the object does."""
        self.store.execute(
            "MATCH (n:Asset {urn: $urn}) SET n.deleted_at = $at",
            {"urn": urn, "at": at},
            write=True,
        )


def cli_lake(store: GraphStore, *more_objects: tuple[str, str]) -> None:
    """The small lake the report CLI and serve tests ask about: orphaned CSV, JSON (Glacier)
    and log objects, a marker, and a marts dataset read a day before the listing; plus
    `more_objects` (bucket, key) of 1 GB each."""
    store.init_schema()
    lake = Lake(store)
    lake.obj("lake", "raw/orders/part-0.csv", size=2 * GB)
    lake.obj("lake", "raw/orders/_SUCCESS", size=0)
    lake.obj("lake", "raw/events/2024/x.json", size=GB, storage_class="GLACIER")
    lake.obj("lake", "logs/app.log", size=GB)
    lake.obj("lake", "marts/sales/part-0.parquet", size=GB)
    for bucket, key in more_objects:
        lake.obj(bucket, key, size=GB)
    lake.read(lake.dataset("s3a://lake/marts/"), at=T0 - DAY)
    lake.write()


def report_options(
    kind: Kind = "orphans",
    *,
    as_of: int = T0 + DAY,
    lookback_days: int = 90,
    exclude: Sequence[str] = (),
    **options: Any,
) -> ReportOptions:
    """A report's options as the CLI builds them by default, a day after the lake's listing."""
    return ReportOptions(
        kind=kind,
        as_of=as_of,
        lookback_days=lookback_days,
        excludes=exclusion_globs(exclude),
        prices=load_prices(),
        price_table=default_price_table(),
        **options,
    )


def report(store: GraphStore, kind: Kind = "orphans", **options: Any) -> Report:
    return run_report(store, report_options(kind, **options))


def rows(result: Report) -> list[dict[str, Any]]:
    return [dict(zip(result.columns, row, strict=True)) for row in result.rows]


def orphaned(store: GraphStore, **kwargs: Any) -> dict[str, int]:
    """Orphaned objects per dataset."""
    found: dict[str, int] = {}
    for row in rows(report(store, by="dataset", **kwargs)):
        found[row["dataset"]] = row["objects"]
    return found
