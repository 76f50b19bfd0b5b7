"""`lineagegraph recommend`: per bucket and prefix that nobody read in the window, the lifecycle
rule that saves the most (docs/reports.md, "Recommendations"), and the bucket's lifecycle
configuration with it, merged with the rules it already has.

The prefixes are the S3 datasets of the cost report's tally (lineagegraph.reports.tally), each
with the datasets under it: a prefix is a candidate when none of them was consumed in the
window (read, or flowed from: the orphan report's test). The money is lineagegraph.reports
.savings'. A rule's ID is derived from its prefix, so a rerun replaces its own rules and
never touches another's.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from typing import Any

from botocore.client import BaseClient
from botocore.exceptions import BotoCoreError, ClientError

from lineagegraph import gc_pause
from lineagegraph.errors import HarvestError, UsageError
from lineagegraph.graph.store import GraphStore
from lineagegraph.harvest.s3.client import describe_error, endpoint_of
from lineagegraph.output import format_rows, size_text, usd_text
from lineagegraph.reports.options import ReportOptions
from lineagegraph.reports.presentation import iso
from lineagegraph.reports.savings import (
    Action,
    Group,
    abort_uploads,
    current_actions,
    expire_noncurrent,
    targets,
    usd,
)
from lineagegraph.reports.tally import (
    CONSUMED,
    HIDDEN,
    ancestors,
    bucket_of,
    tally_of,
    usage_records,
)
from lineagegraph.store_check import require_assets
from lineagegraph.values.pricing import Tally

RULE_ID_PREFIX = "lineagegraph-"
IA_CLASSES = ("STANDARD_IA", "ONEZONE_IA")
IA_MIN_DAYS = 30
"""S3 transitions objects to the IA classes only once they are 30 days old."""
MAX_RULES = 1000
"""S3 takes at most 1,000 rules in a bucket's lifecycle configuration."""


@dataclass(frozen=True)
class Policy:
    """What `recommend` may propose, and after how many days."""

    classes: Sequence[str] = ()  # transition targets; () = every class with a transition fee
    allow_expire: bool = False  # expiring current objects deletes data: only when asked
    transition_days: int = 30  # S3 moves to the IA classes only objects 30 days old or more
    expire_days: int = 30
    noncurrent_days: int = 30
    upload_days: int = 7


@dataclass
class Recommendation:
    """A prefix's rule: the chosen action on its current objects (or None, with the best of
    the rejected ones in `alternatives`), and the hidden-cost actions."""

    bucket: str
    prefix: str
    datasets: list[str]
    last_read: int | None
    chosen: Action | None
    hidden: list[Action]
    alternatives: list[Action]

    @property
    def monthly_saving(self) -> Fraction:
        kept = [self.chosen] if self.chosen else []
        return sum((a.monthly_saving for a in kept + self.hidden if a.recommended), Fraction(0))


@dataclass
class Recommendations:
    options: ReportOptions
    policy: Policy
    items: list[Recommendation]
    skipped: list[dict[str, str]] = field(default_factory=list)  # prefixes left out, and why


def rule_id(kind: str, prefix: str) -> str:
    """A rule's ID from its prefix (S3 caps IDs at 255 characters; prefixes may be longer)."""
    digest = hashlib.sha256(prefix.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"{RULE_ID_PREFIX}{kind}-{digest}"


@gc_pause.paused()
def recommend(store: GraphStore, options: ReportOptions, policy: Policy) -> Recommendations:
    """The recommendations of the graph's S3 datasets (`options` of kind `recommend`)."""
    known = targets(options.prices)
    unknown = [name for name in policy.classes if name not in known]
    if unknown:
        raise UsageError(
            f"--to {unknown[0]}: not a class the price table {options.price_table} gives a "
            f"transition fee; one of {', '.join(known)}"
        )
    records = usage_records(store, options)
    if not records:
        require_assets(store, "orphans_shapes", "S3 objects", "s3")
    by_dataset: dict[str, list[dict[str, Any]]] = {}
    for record in records:
        by_dataset.setdefault(record["dataset"], []).append(record)
    members: dict[str, list[str]] = {}
    skipped: list[dict[str, str]] = []
    for urn in sorted(by_dataset):
        top = next((a for a in ancestors(urn)[1:] if a in by_dataset), None)
        if top is None:
            skipped.append({"dataset": urn, "why": "objects at the bucket's root: a rule would "
                            "cover the whole bucket"})  # fmt: skip
            continue
        members.setdefault(top, []).append(urn)
    items = []
    for top, urns in members.items():
        rows = [r for urn in urns for r in by_dataset[urn]]
        read = sorted({r["dataset"] for r in rows if r["status"] == CONSUMED})
        if read:
            if any(r["status"] not in (CONSUMED, HIDDEN) for r in rows):
                skipped.append({"dataset": top, "why": f"{read[0]} under it was consumed in the "
                                "window"})  # fmt: skip
            continue
        items.append(_recommendation(top, urns, rows, options, policy))
    items.sort(key=lambda r: (-r.monthly_saving, r.bucket, r.prefix))
    return Recommendations(options, policy, items, skipped)


def _recommendation(
    top: str,
    urns: list[str],
    rows: list[dict[str, Any]],
    options: ReportOptions,
    policy: Policy,
) -> Recommendation:
    current: dict[str, Tally] = {}
    newest: dict[str, int | None] = {}
    hidden: dict[str, dict[str, Tally]] = {"noncurrent": {}, "upload": {}, "delete_marker": {}}
    for row in rows:
        tally = tally_of(row)
        storage_class = row.get("priced_as") or row["storage_class"]
        into = hidden[row["hidden_kind"]] if row["status"] == HIDDEN else current
        into[storage_class] = into[storage_class].merge(tally) if storage_class in into else tally
        if row["status"] != HIDDEN and row["newest_modified"] is not None:
            seen = newest.get(storage_class)
            newest[storage_class] = max(int(row["newest_modified"]), seen or 0)
    group = Group(
        current,
        newest,
        hidden["noncurrent"],
        hidden["upload"],
        hidden["delete_marker"].get("STANDARD", Tally()),
    )
    prices, as_of = options.prices, options.as_of
    evaluated = current_actions(
        group, as_of, prices, classes=policy.classes, allow_expire=policy.allow_expire
    )
    chosen = evaluated[0] if evaluated and evaluated[0].recommended else None
    hidden_actions = [
        a for a in (expire_noncurrent(group, prices), abort_uploads(group, prices)) if a.objects
    ]
    reads = [int(r["last_read"]) for r in rows if r["last_read"] is not None]
    key = top[len("s3://") + len(bucket_of(top)) + 1 :]
    return Recommendation(
        bucket_of(top), key + "/", urns, max(reads, default=None), chosen, hidden_actions,
        evaluated,
    )  # fmt: skip


# --- lifecycle rules --------------------------------------------------------------------------


def rules_of(item: Recommendation, policy: Policy) -> list[dict[str, Any]]:
    """The lifecycle rules of a recommendation, as put-bucket-lifecycle-configuration takes
    them: one for the current objects (a size filter when objects under 128 KiB move too), one
    for the hidden cost (S3 takes no size filter with AbortIncompleteMultipartUpload)."""
    rules = []
    chosen = item.chosen
    if chosen is not None:
        prefix_filter: dict[str, Any] = {"Prefix": item.prefix}
        if chosen.kind == "transition" and chosen.small_objects_too:
            prefix_filter = {"And": {"Prefix": item.prefix, "ObjectSizeGreaterThan": 0}}
        rule: dict[str, Any] = {
            "ID": rule_id("objects", item.prefix),
            "Filter": prefix_filter,
            "Status": "Enabled",
        }
        if chosen.kind == "expire":
            rule["Expiration"] = {"Days": policy.expire_days}
        else:
            days = policy.transition_days
            if chosen.target in IA_CLASSES:  # S3 refuses fewer days for these
                days = max(days, IA_MIN_DAYS)
            rule["Transitions"] = [{"Days": days, "StorageClass": chosen.target}]
        rules.append(rule)
    kept = {a.kind for a in item.hidden if a.recommended}
    if kept:
        rule = {"ID": rule_id("hidden", item.prefix), "Filter": {"Prefix": item.prefix}}
        rule["Status"] = "Enabled"
        if "expire-noncurrent" in kept:
            rule["NoncurrentVersionExpiration"] = {"NoncurrentDays": policy.noncurrent_days}
            if not (chosen and chosen.kind == "expire"):
                rule["Expiration"] = {"ExpiredObjectDeleteMarker": True}
        if "abort-uploads" in kept:
            rule["AbortIncompleteMultipartUpload"] = {"DaysAfterInitiation": policy.upload_days}
        rules.append(rule)
    return rules


def existing_rules(client: BaseClient, bucket: str) -> list[dict[str, Any]]:
    """The bucket's lifecycle rules now ([] when it has none: NoSuchLifecycleConfiguration)."""
    try:
        return list(client.get_bucket_lifecycle_configuration(Bucket=bucket).get("Rules", []))
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") == "NoSuchLifecycleConfiguration":
            return []
        raise HarvestError(_failed(exc, "reading the lifecycle rules of", bucket, client)) from None
    except BotoCoreError as exc:
        raise HarvestError(_failed(exc, "reading the lifecycle rules of", bucket, client)) from None


def _failed(exc: BaseException, what: str, bucket: str, client: BaseClient) -> str:
    return describe_error(exc, f"{what} s3://{bucket}", bucket, "", endpoint_of(client))


def merged(existing: list[dict[str, Any]], new: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The bucket's rules with the new ones: every existing rule kept in its place, except an
    earlier `recommend`'s rule of the same ID, which the new one replaces."""
    replacing = {rule["ID"]: rule for rule in new}
    rules = [replacing.pop(rule.get("ID"), rule) for rule in existing]
    rules += [rule for rule in new if rule["ID"] in replacing]
    if len(rules) > MAX_RULES:
        raise HarvestError(
            f"the lifecycle configuration would have {len(rules):,} rules, more than S3's "
            f"{MAX_RULES:,}: give fewer buckets or --to classes, or merge prefixes by hand"
        )
    return rules


def configurations(client: BaseClient, found: Recommendations) -> dict[str, dict[str, Any]]:
    """Per bucket with a rule to add: the whole configuration put-bucket-lifecycle-configuration
    takes (`--lifecycle-configuration`), its existing rules first."""
    per_bucket: dict[str, list[dict[str, Any]]] = {}
    for item in found.items:
        per_bucket.setdefault(item.bucket, []).extend(rules_of(item, found.policy))
    return {
        bucket: {"Rules": merged(existing_rules(client, bucket), rules)}
        for bucket, rules in sorted(per_bucket.items())
        if rules
    }


def apply(client: BaseClient, bucket: str, configuration: dict[str, Any]) -> None:
    """Put the configuration (it replaces the bucket's: `configuration` holds every rule)."""
    try:
        client.put_bucket_lifecycle_configuration(
            Bucket=bucket, LifecycleConfiguration=configuration
        )
    except (ClientError, BotoCoreError) as exc:
        raise HarvestError(_failed(exc, "putting the lifecycle rules of", bucket, client)) from None


# --- output -----------------------------------------------------------------------------------


def _action(action: Action) -> dict[str, Any]:
    payback = action.payback_days
    return {
        "action": action.kind,
        "target": action.target,
        "small_objects_too": action.small_objects_too,
        "objects": action.objects,
        "bytes": action.bytes,
        "monthly_usd_now": usd(action.monthly_before),
        "monthly_usd_after": usd(action.monthly_after),
        "monthly_saving_usd": usd(action.monthly_saving),
        "transition_requests_usd": usd(action.requests_usd),
        "minimum_duration_usd": usd(action.early_usd),
        "payback_days": None if payback is None else usd(payback),
        "horizon_days": action.horizon_days,
        "recommended": action.recommended,
        "why_not": action.why_not,
    }


def document(found: Recommendations, lifecycle: dict[str, dict[str, Any]] | None) -> str:
    """The recommendations as JSON (amounts as exact decimal strings)."""
    o = found.options
    body = {
        "as_of": iso(o.as_of),
        "since": iso(o.since),
        "lookback_days": o.lookback_days,
        "price_table": str(o.price_table),
        "recommendations": [
            {
                "bucket": item.bucket,
                "prefix": item.prefix,
                "datasets": item.datasets,
                "last_read": iso(item.last_read),
                "monthly_saving_usd": usd(item.monthly_saving),
                "objects_rule": _action(item.chosen) if item.chosen else None,
                "hidden_rules": [_action(a) for a in item.hidden],
                "alternatives": [_action(a) for a in item.alternatives],
            }
            for item in found.items
        ],
        "skipped": found.skipped,
        "lifecycle_configurations": lifecycle,
    }
    return json.dumps(body, indent=2, ensure_ascii=False, default=_exact)


def _exact(value: Any) -> str:
    if isinstance(value, Decimal):
        return format(value, "f")
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


COLUMNS = [
    "bucket", "prefix", "action", "objects", "size", "monthly_now", "saving", "one_time",
    "payback_days", "why_not",
]  # fmt: skip


def table(found: Recommendations, width: int | None) -> str:
    """One row per prefix and action for people: the chosen one, or (not recommended) the
    best rejected one with why; then each hidden-cost action."""
    rows = []
    for item in found.items:
        shown = [item.chosen or (item.alternatives[0] if item.alternatives else None)]
        for action in [*shown, *item.hidden]:
            if action is None:
                continue
            what = action.kind + (f" to {action.target}" if action.target else "")
            if action.kind == "transition" and action.small_objects_too:
                what += " (under 128 KiB too)"
            payback = action.payback_days
            rows.append([
                item.bucket, item.prefix, what, f"{action.objects:,}", size_text(action.bytes),
                usd_text(usd(action.monthly_before)), usd_text(usd(action.monthly_saving)),
                usd_text(usd(action.one_time)),
                "" if payback is None else f"{float(payback):,.1f}",
                action.why_not or "",
            ])  # fmt: skip
    amounts = ("objects", "size", "monthly_now", "saving", "one_time", "payback_days")
    o = found.options
    head = (
        f"Lifecycle rules for S3 prefixes nothing consumed in the {o.lookback_days} days "
        f"since {iso(o.since)} (prices: {o.prices.region}, {o.price_table})"
    )
    total = sum((item.monthly_saving for item in found.items), Fraction(0))
    lines = [head, format_rows(COLUMNS, rows, "table", right_aligned=amounts, width=width)]
    lines.append(f"Total monthly saving of the recommended rules: {usd_text(usd(total))}")
    lines += [f"skipped {s['dataset']}: {s['why']}" for s in found.skipped]
    return "\n\n".join(lines)
