"""After a scan: soft deletes confined to complete scopes, the mass-delete guard, and roll-ups.

A scope (bucket + key prefix) soft-deletes the objects it no longer sees only when its scan
completed; a scope that failed, was interrupted or was denied deletes nothing, and a complete
scan that would lose more than ``s3.max_delete_share`` of its scope stops: a rewrite (a dataset
whose old objects were replaced by new ones) is not a loss (docs/deletion.md). A dataset that
lineage runs through and that the scan leaves without a live object is deleted with it, and
so is an object that lineage names directly (a job reading one file): their lineage stops at
the scan's start (docs/history.md), as a Snowflake DROP's does.

Dataset roll-ups (objects, bytes, per storage class) are recomputed from the graph's present
files afterwards, so they also count files outside the scanned prefix.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lineagegraph.graph.history import delete_assets
from lineagegraph.graph.store import GraphStore, chunks
from lineagegraph.harvest.s3.scan import (
    HIDDEN_PREFIX,
    HIDDEN_SEEN,
    HiddenTallies,
    Scope,
    class_suffix,
)
from lineagegraph.harvest.s3.settings import S3Settings
from lineagegraph.pipeline import HarvestRun

ROLLUP_PAGE = 2000  # datasets per rollup round trip


def settle(
    store: GraphStore,
    scopes: Sequence[Scope],
    failures: dict[Scope, list[str]],
    started: int,
    settings: S3Settings,
    allow_mass_delete: bool,
    run: HarvestRun,
    previous: dict[Scope, int],
) -> list[str]:
    """Soft-delete what complete scopes no longer hold, then refresh dataset rollups.

    `previous` is each scope's live object count before the scan. Returns the reasons the run
    is partial (failed scopes, refused mass deletes).
    """
    errors = [message for scope in scopes for message in failures.get(scope, [])]
    for scope in scopes:
        if scope in failures:
            continue
        params = {"root": scope.url, "started": started}
        counts = store.read("s3_scope_counts", params)[0]
        present, unseen = int(counts["present"] or 0), int(counts["unseen"] or 0)
        if not unseen:
            continue
        before = max(previous[scope], unseen)  # what it did not see was there before it
        share = settings.max_delete_share
        if not allow_mass_delete:
            refusal = shrink_refusal(scope, before, present - unseen, unseen, share)
            if refusal:
                errors.append(refusal)
                continue
        vanished = store.read("s3_scope_vanished", params)  # the guard's, and emptied datasets
        if not allow_mass_delete:
            refusal = vanish_refusal(scope, vanished, before, unseen, share)
            if refusal:
                errors.append(refusal)
                continue
        # The drops first: a run killed between the two finds the objects unseen again and
        # finishes; the other way round it would find nothing unseen and never stop the lineage.
        datasets, files = stop_lineage(store, scope, vanished, started)
        run.counts["datasets_deleted"] += datasets
        run.counts["files_deleted"] += files
        deleted = store.run("s3_soft_delete", params).records()[0]["deleted"]
        run.counts["soft_deleted"] += int(deleted) + files  # the dropped files are deleted too
    for scope in scopes:
        if scope not in failures:  # its objects, one by one, replace its inventory roll-ups
            params = {"bucket": scope.bucket, "prefix": scope.prefix, "seen": started}
            store.run("s3_supersede_rollups", params)
        refresh_rollups(store, scope)
    return errors


def stop_lineage(
    store: GraphStore, scope: Scope, vanished: list[dict[str, Any]], started: int
) -> tuple[int, int]:
    """Delete, as of the scan's start, what lineage runs through and the scan of `scope` left
    gone, and stop its lineage with it (a DROP's `delete_assets`): the emptied datasets
    (`vanished`) with lineage, and the unseen objects that lineage names directly. Returns how
    many datasets and objects were deleted."""
    urns: list[str] = []
    for page in chunks((row["dataset"] for row in vanished), ROLLUP_PAGE):
        found = store.read("s3_datasets_in_lineage", {"urns": page, "started": started})
        urns += (row["urn"] for row in found)
    datasets = len(urns)
    found = store.read("s3_scope_files_in_lineage", {"root": scope.url, "started": started})
    urns += (row["urn"] for row in found)
    delete_assets(store, [{"urn": urn, "at": started} for urn in urns])
    return datasets, len(urns) - datasets


ADVICE = (
    "check the bucket, prefix and credentials, and if the objects really are gone rerun "
    "with --allow-mass-delete"
)


def _stopped(scope: Scope, unseen: int, previous: int, share: float) -> tuple[str, str]:
    what = f"stopped before soft-deleting {unseen:,} of {previous:,} objects under {scope.url}"
    return what, f"more than s3.max_delete_share ({share:.0%})"


def shrink_refusal(scope: Scope, previous: int, live: int, unseen: int, share: float) -> str | None:
    """Why a complete scan that leaves `live` of the scope's `previous` objects looks like a
    loss (an empty listing), or None: its live count falls below (1 - share) of before."""
    if live >= (1 - share) * previous:
        return None
    what, limit = _stopped(scope, unseen, previous, share)
    return (
        f"{what}: the scan sees {live:,} live objects where the scope had {previous:,} "
        f"({1 - live / previous:.0%} fewer), {limit}; {ADVICE}"
    )


def vanish_refusal(
    scope: Scope, vanished: list[dict[str, Any]], previous: int, unseen: int, share: float
) -> str | None:
    """Why soft-deleting `unseen` objects looks like a loss (a mis-scoped listing), or None:
    datasets that vanish entirely (`vanished`, s3_scope_vanished) with more than `share` of
    the scope. An unseen object whose dataset still has live objects was replaced (a Spark
    overwrite): the share counts losses, not rewrites."""
    lost = sum(int(row["objects"]) for row in vanished)
    if lost <= share * previous:
        return None
    what, limit = _stopped(scope, unseen, previous, share)
    names = ", ".join(row["dataset"] for row in vanished[:3])
    more = f" and {len(vanished) - 3:,} more" if len(vanished) > 3 else ""
    return (
        f"{what}: {len(vanished):,} datasets would vanish entirely ({names}{more}) with "
        f"{lost:,} objects ({lost / previous:.0%} of the scope), {limit}; {ADVICE}"
    )


# --- dataset rollups -----------------------------------------------------------------------


ROLLUP_KEY_PREFIXES = ("objects_", "bytes_")


def refresh_rollups(store: GraphStore, scope: Scope) -> int:
    """Recompute the rollups of every dataset holding an object of the scope.

    The scope's datasets are found in one pass over its objects, then summed a page at a time
    (a page per pass over the objects made the work grow with datasets times objects); memory
    holds the scope's dataset urns, far fewer than its objects.
    """
    params = {"root": scope.url}
    urns = [row["dataset"] for row in store.read("s3_scope_datasets", params)]
    for page in chunks(urns, ROLLUP_PAGE):
        per_dataset: dict[str, dict[str, tuple[int, int]]] = {urn: {} for urn in page}
        for row in store.read("s3_dataset_rollup", {"datasets": page}):
            if row["storage_class"] is not None:
                per_dataset[row["dataset"]][row["storage_class"]] = (
                    int(row["objects"]),
                    int(row["bytes"]),
                )
        write_rollups(store, per_dataset)
    return len(urns)


def write_rollups(store: GraphStore, rollups: dict[str, dict[str, tuple[int, int]]]) -> None:
    """Store `objects`, `bytes` and per-class `objects_<C>`/`bytes_<C>` on each dataset; a
    class the dataset no longer holds drops to 0 (properties cannot be removed by name here)."""
    for urns in chunks(({"urn": u} for u in rollups), store.batch_size):
        names = [u["urn"] for u in urns]
        existing = {r["dataset"]: r["keys"] for r in store.read("s3_dataset_keys", {"urns": names})}
        rows = []
        for urn in names:
            props: dict[str, int] = {
                key: 0 for key in existing.get(urn, []) if key.startswith(ROLLUP_KEY_PREFIXES)
            }
            classes = rollups[urn]
            props["objects"] = sum(o for o, _ in classes.values())
            props["bytes"] = sum(b for _, b in classes.values())
            for storage_class, (objects, size) in classes.items():
                suffix = class_suffix(storage_class)
                props[f"objects_{suffix}"] = props.get(f"objects_{suffix}", 0) + objects
                props[f"bytes_{suffix}"] = props.get(f"bytes_{suffix}", 0) + size
            rows.append({"urn": urn, "props": props})
        store.write_batches("s3_set_dataset_rollup", rows, ("urn",))


def write_hidden(
    store: GraphStore, scopes: Sequence[Scope], tallies: HiddenTallies, seen: int
) -> int:
    """Store the hidden cost a complete scan found on its datasets, replacing what an earlier
    scan stored: on a dataset the scan touched, or one under a scanned scope, hidden cost it no
    longer found is removed (its properties set to null). So a rerun converges, and versions
    expired or uploads aborted since disappear. Returns the datasets written."""
    urns = set(tallies.touched) | set(tallies.props)
    for scope in scopes:
        rows = store.read("s3_scope_hidden_datasets", {"root": scope.url})
        urns.update(row["dataset"] for row in rows)
    written = 0
    for page in chunks(sorted(urns), store.batch_size):
        existing = {r["dataset"]: r["keys"] for r in store.read("s3_dataset_keys", {"urns": page})}
        rows = []
        for urn in page:
            props: dict[str, int | None] = {
                key: None for key in existing.get(urn, []) if key.startswith(HIDDEN_PREFIX)
            }
            found = tallies.props.get(urn)
            if found:
                props.update(found)
                props[HIDDEN_SEEN] = seen
            if props:
                rows.append({"urn": urn, "props": props})
        written += store.write_batches("s3_set_dataset_rollup", rows, ("urn",))
    return written


def live_objects(store: GraphStore, scope: Scope) -> int:
    """The scope's present (not soft-deleted) objects: its live count before a scan."""
    params = {"root": scope.url, "started": 0}
    return int(store.read("s3_scope_counts", params)[0]["present"] or 0)
