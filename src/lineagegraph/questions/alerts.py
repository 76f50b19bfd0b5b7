"""Alert rules evaluated over the graph: what is wrong now, each as a value (docs/alerts.md).

An alert has a rule, a key that stays the same across evaluations (the rule and what it is
about), a severity, a state, since when, a cause in words, and a blast radius: what lies
downstream of its asset. This module only reads the graph and says what fires now; the state
across evaluations (fired once, resolved once) and the delivery are lineagegraph.notify's.

Noise control: an asset alert whose asset lies downstream of another firing alert of the same
rule is folded into it. One late raw table gives one freshness alert that names every late
asset it explains, not one alert per late asset below it.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Protocol

from lineagegraph.alerts_settings import SEVERITIES, AlertSettings
from lineagegraph.graph.store import chunks
from lineagegraph.output import time_text
from lineagegraph.questions.history import changed_at, edge_held
from lineagegraph.questions.lineage import MAX_DEPTH
from lineagegraph.questions.quality import BLOCKING
from lineagegraph.questions.status import coverage_shares
from lineagegraph.schemas import changes_by_asset
from lineagegraph.values.globs import glob_regex

HOUR_MS = 3_600_000
FIRING, RESOLVED = "firing", "resolved"
DEFAULT_SEVERITY = {
    "freshness": "warning",
    "run_unfinished": "warning",
    "run_failed": "critical",
    "harvest_failing": "warning",
    "coverage": "warning",
    "quality": "critical",
    "schema_change": "warning",
    "upstream_drift": "warning",
}
BREAKING = "critical"  # a schema change that drops or retypes a column something reads
ALSO_SEVERITIES = {"schema_change": (BREAKING,)}
"""Severities a rule fires at besides its own (`[alerts] severity`): /metrics keeps a series
for each, so a rule's series never come and go."""
FOLDED_RULES = ("freshness", "quality")  # the rules about an asset, folded along lineage
_ERROR_CHARS = 300
_CHUNK = 5000


class Reads(Protocol):
    """What the rules need of a store: its named read statements (a GraphStore; `serve` hands
    one that takes its read lock per statement, so no request waits for a whole evaluation)."""

    def read(self, name: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]: ...


@dataclass(frozen=True, slots=True)
class BlastRadius:
    """What lies downstream of an alert's asset: how many assets and their columns, the
    nearest ones by urn, and the owners ([alerts] owners) of the asset and of those."""

    assets: int = 0
    columns: int = 0
    names: tuple[str, ...] = ()
    owners: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Alert:
    """One alert. `subject` is what it is about in words (an asset's urn, a system); `asset` the
    urn when it is about an asset. `explains` are the subjects of the alerts folded into it."""

    rule: str
    key: str
    severity: str
    subject: str
    cause: str
    since: int
    state: str = FIRING
    asset: str | None = None
    ended: int | None = None
    blast: BlastRadius = field(default_factory=BlastRadius)
    explains: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Alert:
        blast = data.get("blast") or {}
        return cls(
            **{k: v for k, v in data.items() if k not in ("blast", "explains")},
            blast=BlastRadius(
                assets=blast.get("assets", 0),
                columns=blast.get("columns", 0),
                names=tuple(blast.get("names", ())),
                owners=tuple(blast.get("owners", ())),
            ),
            explains=tuple(data.get("explains", ())),
        )


def severity_rank(severity: str) -> int:
    """info 0, warning 1, critical 2."""
    return SEVERITIES.index(severity)  # type: ignore[arg-type]


def evaluate(store: Reads, settings: AlertSettings, now: int) -> list[Alert]:
    """Every alert firing at `now` (epoch ms), folded, with blast radii; by rule, then key."""
    found = [
        *_freshness(store, settings, now),
        *_runs(store, settings, now),
        *(_harvest_failing(store) if settings.harvest_failing else ()),
        *_coverage(store, settings, now),
        *(_quality(store) if settings.quality else ()),
        *_schema_changes(store, settings, now),
        *_upstream_drift(store, settings, now),
    ]
    severity = DEFAULT_SEVERITY | settings.severity
    found = [replace(a, severity=a.severity or severity[a.rule]) for a in found]
    alerts = _fold_and_measure(store, settings, found)
    return sorted(alerts, key=lambda a: (a.rule, a.key))


def _first_match(globs: dict[str, float], text: str) -> float | None:
    for glob, value in globs.items():
        if glob_regex(glob).fullmatch(text):
            return value
    return None


WRITES = ("alerts_writes_by_jobs", "alerts_writes_by_flows", "alerts_writes_by_objects")
"""How each source records a write of an asset: each gives its first, last and count."""


def last_writes(store: Reads) -> dict[str, list[tuple[int, int, int]]]:
    """Each written asset's write histories, one per kind of record: (first, last, writes)."""
    found: dict[str, list[tuple[int, int, int]]] = {}
    for name in WRITES:
        for row in store.read(name):
            if row["last"] is not None:
                history = (row["first"], row["last"], row["writes"] or 0)
                found.setdefault(row["urn"], []).append(history)
    return found


def _freshness(store: Reads, settings: AlertSettings, now: int) -> list[Alert]:
    """Assets whose newest write is older than their window (set by glob, or learned)."""
    if not settings.freshness and not settings.learn_freshness:
        return []
    late = []
    for urn, histories in sorted(last_writes(store).items()):
        last = max(h[1] for h in histories)
        hours = _first_match(settings.freshness, urn)
        if hours is not None:
            window, how = int(hours * HOUR_MS), "set"
        elif settings.learn_freshness:
            first, newest, writes = max(histories, key=lambda h: h[2])
            if writes < settings.freshness_min_writes or newest <= first:
                continue
            usual = (newest - first) / (writes - 1)
            window = int(usual * settings.freshness_tolerance)
            how = f"learned: written every {_hours(usual)} h over {writes} writes"
        else:
            continue
        if now > last + window:
            late.append(
                Alert(
                    rule="freshness",
                    key=f"freshness:{urn}",
                    severity="",
                    subject=urn,
                    asset=urn,
                    since=last + window,
                    cause=f"not written since {time_text(last)}; window {_hours(window)} h ({how})",
                )
            )
    return late


def _runs(store: Reads, settings: AlertSettings, now: int) -> list[Alert]:
    """Jobs with OpenLineage runs that never finished within the timeout, and jobs whose latest
    ended run failed; one alert per job and rule, its blast radius from what the job writes."""
    by_job: dict[tuple[str, str], list[dict[str, Any]]] = {}
    if settings.run_timeout_hours:
        timeout = int(settings.run_timeout_hours * HOUR_MS)
        for row in store.read("alerts_runs_unfinished", {"before": now - timeout}):
            by_job.setdefault(("run_unfinished", row["job"]), []).append(row | {"due": timeout})
    if settings.run_failed:
        for row in store.read("alerts_runs_failed"):
            by_job.setdefault(("run_failed", row["job"]), []).append(row | {"due": 0})
    writes = {
        row["job"]: row["writes"]
        for chunk in chunks(sorted({job for _, job in by_job}), _CHUNK)
        for row in store.read("alerts_job_writes", {"jobs": chunk})
    }
    alerts = []
    blasts = _blasts_below(store, settings, [writes.get(job, []) for _, job in by_job])
    for ((rule, job), rows), blast in zip(by_job.items(), blasts, strict=True):
        first = rows[0]
        if rule == "run_unfinished":
            cause = f"{len(rows)} run(s) started and not finished after " + _hours(
                first["due"]
            ) + " h: " + "; ".join(
                f"{r['run_id']} ({r['state']} since {time_text(r['started'])})" for r in rows
            )  # fmt: skip
            since = first["started"] + first["due"]
        else:
            cause = f"its latest run {first['run_id']} ended {first['state']} at " + str(
                time_text(first["at"])
            )
            since = first["at"]
        alerts.append(
            Alert(
                rule=rule,
                key=f"{rule}:{job}",
                severity="",
                subject=job,
                since=since,
                cause=cause,
                blast=blast,
            )
        )
    return alerts


def _hours(ms: float) -> str:
    return f"{ms / HOUR_MS:.3g}"


def _harvest_failing(store: Reads) -> list[Alert]:
    """Sources whose harvests failed or were partial since their last success."""
    alerts = []
    for row in store.read("alerts_harvest_failing"):
        _, status, error = max(row["failed"], key=lambda f: f[0] or 0)
        ok = time_text(row["last_success"]) if row["last_success"] else None
        error = (error or "")[:_ERROR_CHARS]
        alerts.append(
            Alert(
                rule="harvest_failing",
                key=f"harvest_failing:{row['system']}:{row['scope']}",
                severity="",
                subject=f"{row['system']} {row['scope']}",
                since=row["since"],
                cause=f"{row['failures']} harvest(s) failed or partial since "
                + (f"the last success at {ok}" if ok else "ever (never succeeded)")
                + f"; the last one {status}"
                + (f": {error}" if error else ""),
            )
        )
    return alerts


def _coverage(store: Reads, settings: AlertSettings, now: int) -> list[Alert]:
    """Systems whose share of tables and datasets with lineage is under their minimum."""
    if not settings.coverage:
        return []
    alerts = []
    for row in coverage_shares(store.read("status_coverage"), "system"):
        least = _first_match(settings.coverage, row["system"])
        if least is None or row["share"] >= least:
            continue
        alerts.append(
            Alert(
                rule="coverage",
                key=f"coverage:{row['system']}",
                severity="",
                subject=row["system"],
                since=now,  # the first evaluation that saw it (kept by notify's state)
                cause=f"{row['with_lineage']} of {row['assets']} tables and datasets have "
                f"lineage ({row['share']:.1%}), under {least:.1%}",
            )
        )
    return alerts


def _quality(store: Reads) -> list[Alert]:
    """Assets with checks (on them or their columns) whose latest result fails or errs."""
    by_asset: dict[str, list[dict[str, Any]]] = {}
    for row in store.read("alerts_failing_checks", {"statuses": sorted(BLOCKING)}):
        by_asset.setdefault(row["asset"], []).append(row)
    alerts = []
    for urn, rows in by_asset.items():
        named = "; ".join(
            f"{r['check'] or r['urn']} ({r['status']}"
            + (f", {r['failures']} failures" if r["failures"] else "")
            + f") on {r['target']}"
            for r in rows
        )
        alerts.append(
            Alert(
                rule="quality",
                key=f"quality:{urn}",
                severity="",
                subject=urn,
                asset=urn,
                since=min(r["at"] for r in rows),
                cause=f"{len(rows)} failing check(s): {named}",
            )
        )
    return alerts


def _schema_changes(store: Reads, settings: AlertSettings, now: int) -> list[Alert]:
    """Assets that something reads whose schema changed within the window, each source's
    versions compared (lineagegraph.schemas). Breaking (critical) when a dropped or retyped
    column feeds columns downstream (named), or when none of the asset's columns has column
    lineage and jobs or assets downstream read it (named): they may read that column."""
    if not settings.schema_change_hours:
        return []
    since = now - int(settings.schema_change_hours * HOUR_MS)
    rows = store.read("alerts_schema_changed", {"since": since})
    found = {urn: [c for c in cs if c.at >= since] for urn, cs in changes_by_asset(rows).items()}
    found = {urn: cs for urn, cs in found.items() if cs}
    asked = [
        {"asset": urn, "columns": sorted({c for x in cs for c in x.broken})}
        for urn, cs in found.items()
    ]
    reads = {
        row["asset"]: row
        for chunk in chunks(asked, _CHUNK)
        for row in store.read("alerts_schema_readers", {"rows": chunk})
    }
    alerts = []
    belows, blasts = _below_and_blasts(store, settings, list(found))
    for (urn, found_changes), below, blast in zip(found.items(), belows, blasts, strict=True):
        cause = "; ".join(f"{c.source} at {time_text(c.at)}: {c.summary()}" for c in found_changes)
        read = reads.get(urn, {"fed": [], "feeds": 0, "readers": []})
        named = sorted(read["fed"])
        if not read["feeds"]:
            named += sorted(read["readers"]) + below
        breaking = any(c.breaking for c in found_changes) and bool(named)
        if breaking:
            what = "feeds" if read["fed"] else "read by"
            shown = named[: max(settings.blast_names, 1)]
            more = f" and {len(named) - len(shown)} more" if len(named) > len(shown) else ""
            cause = f"breaking: {cause}; {what} {', '.join(shown)}{more}"
        alerts.append(
            Alert(
                rule="schema_change",
                key=f"schema_change:{urn}",
                severity=BREAKING if breaking else "",
                subject=urn,
                asset=urn,
                since=found_changes[0].at,
                cause=cause,
                blast=blast,
            )
        )
    return alerts


def _upstream_drift(store: Reads, settings: AlertSettings, now: int) -> list[Alert]:
    """Present assets, there at the window's start, whose set of upstream assets (the assets
    with a FLOWS_TO into them) differs between the window's start and now: an upstream that
    started, stopped or came back flowing into it (its edge's history, docs/history.md),
    compared at both ends, so one that stopped and came back within the window is no change.
    Not folded: drift upstream does not explain drift below."""
    if not settings.upstream_drift_hours:
        return []
    since = now - int(settings.upstream_drift_hours * HOUR_MS)
    by_asset: dict[str, list[tuple[str, str, int]]] = {}  # asset -> (added/removed, urn, at)
    for row in store.read("alerts_upstream_drift", {"since": since, "until": now}):
        spans = (row["first_seen"], row["stopped"], row["resumed"])
        before, after = edge_held(*spans, since), edge_held(*spans, now)
        if before == after:
            continue
        times = (row["stopped"] or ()) if before else [row["first_seen"], *(row["resumed"] or ())]
        via = f" via {', '.join(row['via'])}" if row["via"] else ""
        change = ("added" if after else "removed", f"{row['upstream']}{via}")
        by_asset.setdefault(row["asset"], []).append((*change, changed_at(times, since, now)))
    alerts = []
    drifted = sorted(by_asset)
    _, blasts = _below_and_blasts(store, settings, drifted)
    for urn, blast in zip(drifted, blasts, strict=True):
        found = by_asset[urn]
        parts = [
            f"{name}: " + ", ".join(what for kind, what, _ in found if kind == name)
            for name in ("added", "removed")
            if any(kind == name for kind, _, _ in found)
        ]
        alerts.append(
            Alert(
                rule="upstream_drift",
                key=f"upstream_drift:{urn}",
                severity="",
                subject=urn,
                asset=urn,
                since=min(at for _, _, at in found),
                cause=f"its upstream assets changed: {'; '.join(parts)}",
                blast=blast,
            )
        )
    return alerts


def downstream_of(store: Reads, starts: Collection[str]) -> dict[str, int]:
    """Every present asset downstream of any of `starts`, with its distance from the nearest
    (the starts themselves only when one reaches another)."""
    return downstream_of_each(store, [starts])[0]


def downstream_of_each(store: Reads, searches: Sequence[Collection[str]]) -> list[dict[str, int]]:
    """`downstream_of` for each of several sets of starts, all searched together: one step
    statement per level (per 5,000 frontier assets) for all of them, as `traverse` does for
    one, rather than a level's statement per search: an evaluation with a thousand late roots
    sends a few dozen statements, not thousands."""
    reached: list[dict[str, int]] = [{} for _ in searches]
    frontier = [(i, urn) for i, starts in enumerate(searches) for urn in sorted(set(starts))]
    distance = 0
    while frontier and distance < MAX_DEPTH:
        distance += 1
        found: set[tuple[int, str]] = set()
        for chunk in chunks(frontier, _CHUNK):
            rows = store.read("alerts_downstream_step", {"rows": _search_rows(chunk)})
            found.update(
                (row["search"], row["urn"])
                for row in rows
                if row["urn"] not in reached[row["search"]]
            )
        for i, urn in found:
            reached[i][urn] = distance
        frontier = sorted(found)
    return reached


def _search_rows(pairs: Iterable[tuple[int, str]]) -> list[dict[str, Any]]:
    return [{"search": i, "urn": urn} for i, urn in pairs]


def _below_and_blasts(
    store: Reads, settings: AlertSettings, urns: Sequence[str]
) -> tuple[list[list[str]], list[BlastRadius]]:
    """For each asset, the assets downstream of it (not itself, through a cycle), nearest
    first, then by urn; and its blast radius, those."""
    belows = []
    for urn, reach in zip(urns, downstream_of_each(store, [[u] for u in urns]), strict=True):
        reach.pop(urn, None)
        belows.append(sorted(reach, key=lambda u: (reach[u], u)))
    radii = [([urn], below) for urn, below in zip(urns, belows, strict=True)]
    return belows, _blasts(store, settings, radii)


def _fold_and_measure(store: Reads, settings: AlertSettings, alerts: list[Alert]) -> list[Alert]:
    """Fold each asset alert into the firing alert of its rule that it lies downstream of, and
    give every remaining asset alert its blast radius.

    One search from all of a rule's alerts at once tells which lie below another; the others
    (the roots) are searched from together, each for what it explains and reaches. Alerts
    that only reach each other (a cycle) leave no root: the lowest key among them leads (and
    is searched from alone, once the roots have taken what they explain)."""
    kept: list[Alert] = []
    for rule in dict.fromkeys(a.rule for a in alerts):
        of_rule = sorted((a for a in alerts if a.rule == rule), key=lambda a: a.key)
        if rule not in FOLDED_RULES:
            kept.extend(of_rule)
            continue
        below_some = downstream_of(store, [str(a.asset) for a in of_rule])
        waiting = {a.asset: a for a in of_rule}
        leaders = [a for a in of_rule if a.asset not in below_some]
        # No root lies below another: what each reaches does not depend on the others.
        reaches = dict(
            zip(
                [str(a.asset) for a in leaders],
                downstream_of_each(store, [[str(a.asset)] for a in leaders]),
                strict=True,
            )
        )
        roots: list[tuple[Alert, list[str]]] = []
        while waiting:
            leader = leaders.pop(0) if leaders else next(iter(waiting.values()))
            if waiting.pop(leader.asset, None) is None:
                continue  # folded into an earlier leader meanwhile
            asset = str(leader.asset)
            reach = reaches.pop(asset) if asset in reaches else downstream_of(store, [asset])
            reach.pop(asset, None)  # back to itself through a cycle
            explained = [waiting.pop(u).subject for u in sorted(reach) if u in waiting]
            roots.append(
                (
                    replace(leader, explains=tuple(explained)),
                    sorted(reach, key=lambda u: (reach[u], u)),
                )
            )
        blasts = _blasts(store, settings, [([str(a.asset)], below) for a, below in roots])
        kept.extend(replace(a, blast=b) for (a, _), b in zip(roots, blasts, strict=True))
    return kept


def _blasts_below(
    store: Reads, settings: AlertSettings, written: Sequence[list[str]]
) -> list[BlastRadius]:
    """Each job's blast radius: what it writes, then everything downstream of that, nearest
    first."""
    radii = []
    for urns, reach in zip(written, downstream_of_each(store, written), strict=True):
        below = sorted((u for u in reach if u not in urns), key=lambda u: (reach[u], u))
        radii.append(([], [*sorted(urns), *below]))
    return _blasts(store, settings, radii)


def _blasts(
    store: Reads, settings: AlertSettings, radii: Sequence[tuple[list[str], list[str]]]
) -> list[BlastRadius]:
    """The blast radius of each (start, counted): `counted` the assets an alert reaches, owned
    as `start` and those; the columns of all of them counted together."""
    columns = [0] * len(radii)
    pairs = ((i, urn) for i, (_, counted) in enumerate(radii) for urn in counted)
    for chunk in chunks(pairs, _CHUNK):
        for row in store.read("alerts_columns_count", {"rows": _search_rows(chunk)}):
            columns[row["search"]] += int(row["columns"])
    return [
        BlastRadius(
            assets=len(counted),
            columns=columns[i],
            names=tuple(counted[: settings.blast_names]),
            owners=tuple(_owners(settings.owners, [*start, *counted])),
        )
        for i, (start, counted) in enumerate(radii)
    ]


def _owners(owners: dict[str, str], urns: Iterable[str]) -> list[str]:
    """The owners of these urns by the first glob of each that matches, each once, in order."""
    if not owners:
        return []
    compiled = [(glob_regex(g), who) for g, who in owners.items()]
    found: dict[str, None] = {}
    for urn in urns:
        who = next((who for pattern, who in compiled if pattern.fullmatch(urn)), None)
        if who is not None:
            found[who] = None
    return list(found)


def at_least(alerts: Iterable[Alert], severity: str) -> list[Alert]:
    """The firing alerts of `severity` or worse."""
    floor = severity_rank(severity)
    return [a for a in alerts if a.state == FIRING and severity_rank(a.severity) >= floor]
