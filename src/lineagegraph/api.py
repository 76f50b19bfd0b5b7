"""The Python API: what a scheduler or a notebook needs, without the CLI.

Everything here is also reachable as `lineagegraph.NAME` (imported on first use, so that
`import lineagegraph` stays cheap inside a Spark driver):

    import lineagegraph

    settings = lineagegraph.load_settings("lineagegraph.toml")
    lineagegraph.harvest_all(settings)  # or lineagegraph.harvest_source("s3", store, settings)
    with lineagegraph.open_store(settings) as store:
        print(lineagegraph.upstream(store, settings, "analytics.marts.daily_sales").render("tree"))
"""

from __future__ import annotations

from pathlib import Path

from lineagegraph.errors import (
    ConfigError,
    HarvestError,
    LineageGraphError,
    QueryError,
    StoreError,
)
from lineagegraph.graph import store as _store
from lineagegraph.graph.base import GraphStore, Result
from lineagegraph.harvest.all import SourceResult, harvest_all, run_harvester
from lineagegraph.harvest.base import Harvester, HarvestReport, Progress, Tick, no_progress
from lineagegraph.harvest.registry import harvester, harvesters
from lineagegraph.output import write_file
from lineagegraph.questions.answers import (
    ColumnLineage,
    ImpactAnswer,
    Paths,
    Traversal,
    check,
    columns,
    diff,
    downstream,
    impact,
    path,
    schema_history,
    timeline,
    traversal,
    upstream,
)
from lineagegraph.questions.schemas import SchemaHistory
from lineagegraph.questions.tag_answers import TagsAnswer
from lineagegraph.questions.tag_answers import tags_of as tags
from lineagegraph.reports.options import build_options
from lineagegraph.reports.orphans import run_report
from lineagegraph.reports.presentation import Report
from lineagegraph.settings import GraphSettings, Settings
from lineagegraph.settings import load_settings as _load_settings

__all__ = [
    "ColumnLineage", "ConfigError", "GraphStore", "HarvestError", "HarvestReport", "Harvester",
    "ImpactAnswer", "LineageGraphError", "Paths", "Progress", "QueryError", "Report", "Result",
    "SchemaHistory", "Settings", "SourceResult", "StoreError", "TagsAnswer", "Tick", "Traversal",
    "check",
    "columns",
    "cost_report", "diff",
    "downstream", "harvest_all", "harvest_source", "harvester", "harvesters", "impact",
    "load_settings", "no_progress", "open_store", "orphans", "path", "schema_history", "tags",
    "timeline",
    "traversal",
    "upstream",
    "write_file",
]  # fmt: skip


def load_settings(config: str | Path | None = None, **overrides: object) -> Settings:
    """Settings from `config` (a TOML file; default: $LINEAGEGRAPH_CONFIG, else
    config/lineagegraph.toml if present), LINEAGEGRAPH_* variables and `overrides`
    (sections as dicts: `graph={"data_dir": "/tmp/graph"}`). ConfigError names a bad key."""
    return _load_settings(Path(config) if config is not None else None, **overrides)


def open_store(settings: Settings | GraphSettings | None = None) -> GraphStore:
    """The graph of `settings` (Neo4j when [graph] uri is set, else the embedded store).
    Use it as a context manager, or close() it."""
    if settings is None:
        settings = load_settings()
    return _store.open_store(settings.graph if isinstance(settings, Settings) else settings)


def harvest_source(
    name: str | Harvester,
    store: GraphStore,
    settings: Settings,
    *,
    progress: Progress = no_progress,
) -> list[HarvestReport]:
    """Run one source (by its registry name, or a Harvester made with options) into `store`;
    one report per :HarvestRun. Raises LineageGraphError subclasses; what was written stays."""
    source = harvester(name) if isinstance(name, str) else name
    return run_harvester(source, store, settings, progress)


def orphans(store: GraphStore, settings: Settings, **options: object) -> Report:
    """The orphaned-S3 report; `options` as reports.options.build_options (as_of, buckets,
    lookback_days, exclude, include_deleted, by, top). `.render(fmt)` prints it."""
    return run_report(store, build_options(settings.reports, "orphans", **options))  # type: ignore[arg-type]


def cost_report(store: GraphStore, settings: Settings, **options: object) -> Report:
    """The S3 cost report; options and rendering as `orphans`."""
    return run_report(store, build_options(settings.reports, "cost", **options))  # type: ignore[arg-type]
