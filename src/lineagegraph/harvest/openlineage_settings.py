"""[openlineage]: `harvest openlineage`, `harvest all` and serve's event limits."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from lineagegraph.settings_base import Section


class OpenLineageSettings(Section):
    """`harvest openlineage` and `harvest all`: where OpenLineage events are collected."""

    paths: list[Path] = Field(
        default_factory=list,
        description="Files or directories of OpenLineage RunEvents (JSON lines or one event per "
        "file) that `lineagegraph harvest all` reads; each resumes where its last harvest ended.",
    )
    max_event_datasets: int = Field(
        10_000,
        ge=1,
        description="The most datasets (inputs and outputs) one event may list; an event with "
        "more is refused (skipped and reported by `harvest openlineage`, 413 from `serve`).",
    )
    max_event_flows: int = Field(
        100_000,
        ge=1,
        description="The most FLOWS_TO edges (inputs x outputs) one event may draw; an event "
        "over it keeps its datasets and the job's reads and writes, without FLOWS_TO, and is "
        "reported with a warning.",
    )
    follow_links: bool = Field(
        False,
        description="Read event files that a symbolic link under an OpenLineage directory "
        "points to outside it (otherwise they are skipped and reported).",
    )
