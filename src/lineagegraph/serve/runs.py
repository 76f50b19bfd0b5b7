"""Marquez's runs, from the runs the graph keeps:

    GET /api/v1/namespaces/{namespace}/jobs/{job}/runs    a RunList (limit, offset)
    GET /api/v1/jobs/runs/{id}                            a Run

An OpenLineage run is a :Run (cypher/merge_run_states.cypher): its state (a COMPLETE, FAIL or
ABORT over START and RUNNING, else the newest), when it started (its earliest event) and when
that state was told. Spark, dbt, Snowflake and S3 access logs keep no :Run, only a job's last
run (`last_run_id`, `last_run_at`): that run is listed too, as COMPLETED (those sources record
work a run did), started at its time, with no end. Marquez's states: START and RUNNING are
RUNNING, COMPLETE COMPLETED, FAIL FAILED, ABORT ABORTED.
"""

from __future__ import annotations

from typing import Any

from lineagegraph import identity
from lineagegraph.graph.store import GraphStore
from lineagegraph.serve.marquez import NodeNotFound, iso

STATES = {"START": "RUNNING", "RUNNING": "RUNNING", "COMPLETE": "COMPLETED",
          "FAIL": "FAILED", "ABORT": "ABORTED"}  # fmt: skip


def run_list(store: GraphStore, urn: str, limit: int, offset: int) -> dict[str, Any]:
    """Marquez's RunList of the job `urn`: one page, newest start first, and the count. The
    last run of a source that keeps no :Run is the newest."""
    [count] = store.read("serve_job_run_count", {"urn": urn})
    job = _job_name(urn, store)
    extra = count["last_run_id"] is not None and not count["last_is_run"]
    runs: list[dict[str, Any]] = []
    if extra and offset == 0:
        runs.append(_last_run(count["last_run_id"], count["last_run_at"], job))
    skip = max(offset - extra, 0)
    rows = store.read("serve_job_runs", {"urn": urn, "skip": skip, "limit": limit - len(runs)})
    runs += [run_data(row, job) for row in rows]
    return {"totalCount": count["total"] + extra, "runs": runs}


def run(store: GraphStore, run_id: str) -> dict[str, Any]:
    """Marquez's Run with this id, an OpenLineage run or a job's last run."""
    for row in store.read("serve_run", {"id": run_id}):
        return run_data(row, identity.openlineage_job_name(row["job"], row["name"] or ""))
    for row in store.read("serve_last_run", {"id": run_id}):
        job = identity.openlineage_job_name(row["job"], row["name"] or "")
        return _last_run(run_id, row["at"], job)
    raise NodeNotFound(f"no run {run_id!r} in the graph", [])


def _job_name(urn: str, store: GraphStore) -> tuple[str, str]:
    [row] = store.read("serve_jobs", {"urns": [urn]})
    return identity.openlineage_job_name(urn, row["name"] or "")


def run_data(row: dict[str, Any], job: tuple[str, str]) -> dict[str, Any]:
    """Marquez's Run of a :Run: ended (endedAt, durationMs) once its state is terminal."""
    started, at = row["started"], row["at"]
    ended = bool(row["terminal"])
    return _run(row["id"], STATES.get(row["state"], "RUNNING"), started, at,
                at if ended else None, job)  # fmt: skip


def _last_run(run_id: str, at: int | None, job: tuple[str, str]) -> dict[str, Any]:
    return _run(run_id, "COMPLETED", at, at, None, job)


def _run(
    run_id: str,
    state: str,
    started: int | None,
    updated: int | None,
    ended: int | None,
    job: tuple[str, str],
) -> dict[str, Any]:
    """Marquez's Run (IncompleteRun's fields and the run's dataset versions; no jobVersion,
    which Marquez leaves out when it has none), and lineagegraph's own `job`."""
    return {
        "id": run_id,
        "createdAt": iso(started),
        "updatedAt": iso(updated),
        "nominalStartTime": None,
        "nominalEndTime": None,
        "state": state,
        "startedAt": iso(started),
        "endedAt": iso(ended),
        "durationMs": None if ended is None or started is None else ended - started,
        "args": {},
        "inputDatasetVersions": [],
        "outputDatasetVersions": [],
        "facets": {},
        "job": {"namespace": job[0], "name": job[1]},
    }
