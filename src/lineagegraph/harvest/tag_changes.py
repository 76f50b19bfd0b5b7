"""What a source that states its classifications whole each harvest (Snowflake's
TAG_REFERENCES, a dbt manifest) changed since the graph last heard from it.

Only differences are written: a new or changed tag is stated at the harvest time, and a tag the
source no longer states is withdrawn then (`removed_at`, kept for history). A rerun with nothing
changed writes nothing, and a tag's `at` stays the time it was first stated as it is.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from lineagegraph.graph.store import GraphStore
from lineagegraph.model import TagFact


def tag_changes(
    store: GraphStore,
    source: str,
    stated: Iterable[TagFact],
    *,
    prefix: str = "",
    in_scope: Callable[[str], bool] | None = None,
    at: int,
    by: str,
    gone: str,
) -> tuple[list[TagFact], list[TagFact]]:
    """(new or changed facts, withdrawals) of `source` against its live tags on targets under
    `prefix` that `in_scope` accepts (the assets this harvest speaks for); `gone` is the
    withdrawals' reason. A key stated twice on one target keeps the last."""
    live = {
        (row["target"], row["key"]): row["value"]
        for row in store.read("live_source_tags", {"source": source, "prefix": prefix})
        if in_scope is None or in_scope(row["target"])
    }
    now = {(fact.target, fact.key): fact for fact in stated}
    changed = [f for key, f in now.items() if key not in live or live[key] != f.value]
    removed = [
        TagFact(target, key, value, source, by, at, gone, removed=True)
        for (target, key), value in live.items()
        if (target, key) not in now
    ]
    return changed, removed
