"""The reference an OpenLineage harvest is checked against: every event written on its own."""

from __future__ import annotations

from pathlib import Path

from lineagegraph.graph.history import History
from lineagegraph.graph.store import GraphStore
from lineagegraph.graph.writer import GraphWriter
from lineagegraph.harvest.openlineage import (
    EventMapper,
    OpenLineageReport,
    read_events,
    run_state,
)
from lineagegraph.identity import NO_FOLD_RULES


def event_by_event(store: GraphStore, path: Path) -> None:
    """The meaning the reducer must keep: every event's values written in arrival order, each
    run's history (what it no longer produces stops) around its own writes."""
    mapper = EventMapper(NO_FOLD_RULES, [])
    writer = GraphWriter(store)
    for located in read_events(path, OpenLineageReport()):
        history = History()
        if located.event.get("eventType") == "COMPLETE":
            items = mapper.items(located)
            history.take(items)
            writer.add_all(items)
        state = run_state(located.event)  # every run event: its run's state
        if state is not None:
            writer.add(state)
        writer.flush()
        history.write(store)
