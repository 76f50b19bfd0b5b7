"""The policy gate behind `lineagegraph check --policy`: may a classification sit where
lineage carried it?

A [[tags.policies]] entry names a tag and where it may live (buckets, regions, Snowflake
accounts and databases), where it must not (storage classes) and what it must not reach (assets
tagged e.g. `exposure=public`). An asset carries a tag when it or one of its columns has it, its
own or derived along lineage (lineagegraph.questions.tags); each violation names the path that
carried the tag there, from its origin.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from lineagegraph.graph.store import GraphStore, chunks
from lineagegraph.output import format_rows
from lineagegraph.questions.tags import (
    ASSET,
    UNREACHED,
    Propagation,
    TagOrigin,
    derive_all,
    derive_at,
)
from lineagegraph.render.as_json import to_json
from lineagegraph.tags_settings import Policy, TagSettings, split_tag

_CHUNK = 5000


@dataclass(frozen=True, slots=True)
class Violation:
    """`asset` carries `tag` (on `carrier`: itself or a column) against `policy`'s `rule`;
    `path` the urns it travelled from its origin."""

    policy: str
    rule: str
    asset: str
    tag: str
    carrier: str
    origin: TagOrigin
    path: tuple[str, ...]


@dataclass
class PolicyAnswer:
    scope: str | None  # the asset checked, or None for the whole graph
    policies: int
    violations: list[Violation]

    @property
    def passed(self) -> bool:
        return not self.violations

    def render(self, fmt: str) -> str:
        if fmt == "json":
            return to_json({"passed": self.passed, **to_dict(self)})
        where = self.scope or "the whole graph"
        if not self.policies:
            return f"passed: no [[tags.policies]] in the settings to check on {where}"
        if self.passed:
            return f"passed: {self.policies} policy(ies) hold on {where}"
        head = (
            f"FAILED: {len(self.violations)} violation(s) of {self.policies} policy(ies) on {where}"
        )
        rows = [
            [
                v.policy,
                v.rule,
                v.asset,
                v.tag,
                v.origin.target,
                len(v.path) - 1,
                " -> ".join(v.path),
            ]
            for v in self.violations
        ]
        columns = ["policy", "rule", "asset", "tag", "origin", "hops", "path"]
        return head + "\n" + format_rows(columns, rows, "table")


def to_dict(answer: PolicyAnswer) -> dict[str, object]:
    return {"scope": answer.scope, "policies": answer.policies, "violations": answer.violations}


def summary(answer: PolicyAnswer) -> str:
    """One line for the error message: how many, and the first one with its path."""
    first = answer.violations[0]
    return (
        f"{len(answer.violations)} policy violation(s); first: {first.policy} ({first.rule}): "
        f"{first.tag} reached {first.asset} by {' -> '.join(first.path)}"
    )


def check_policies(
    store: GraphStore, settings: TagSettings, asset: str | None = None
) -> PolicyAnswer:
    """Every violation of the settings' policies in the graph, or on one asset (and its
    columns) when `asset` is given."""
    if not settings.policies:
        return PolicyAnswer(asset, 0, [])
    if asset is None:
        found = derive_all(store, settings)
        scope = None
    else:
        columns = store.read("tags_columns_of", {"urns": [asset]})
        found = derive_at(
            store, settings, [(asset, None), *((r["column"], asset) for r in columns)]
        )
        scope = {found.piece.index[asset]} | {found.piece.index[r["column"]] for r in columns}
    carried = [_carriers(found, policy, scope) for policy in settings.policies]
    places = _places(store, found, settings.policies, carried)
    violations = [
        violation
        for policy, carriers in zip(settings.policies, carried, strict=True)
        for violation in _judge(found, policy, carriers, places)
    ]
    violations.sort(key=lambda v: (v.policy, v.asset, v.rule))
    return PolicyAnswer(asset, len(settings.policies), violations)


def _matches(group: tuple[str, str | None], tag: str) -> bool:
    key, value = split_tag(tag)
    return group[0] == key and (value is None or group[1] == value)


def _carriers(
    found: Propagation, policy: Policy, scope: set[int] | None
) -> dict[int, tuple[int, int]]:
    """asset -> (group, node) of one tag of the policy it carries (itself or a column)."""
    piece = found.piece
    carriers: dict[int, tuple[int, int]] = {}
    for g, group in enumerate(found.groups):
        if not _matches(group, policy.tag):
            continue
        pred = found.pred[g]
        for node, p in enumerate(pred):
            if p == UNREACHED or (scope is not None and node not in scope):
                continue
            owner = piece.asset_of[node]
            asset = node if owner == ASSET else owner
            if asset >= 0:
                carriers.setdefault(asset, (g, node))
    return carriers


@dataclass(frozen=True, slots=True)
class Place:
    region: str | None
    storage_classes: frozenset[str]


def _places(
    store: GraphStore,
    found: Propagation,
    policies: list[Policy],
    carried: list[dict[int, tuple[int, int]]],
) -> dict[str, Place]:
    """Region and storage classes of the carrying assets, read only when a policy needs them."""
    needed = {
        found.piece.names[asset]
        for policy, carriers in zip(policies, carried, strict=True)
        if policy.regions is not None or policy.storage_classes
        for asset in carriers
    }
    places: dict[str, Place] = {}
    for chunk in chunks(sorted(needed), _CHUNK):
        for row in store.read("tags_asset_places", {"urns": chunk}):
            classes = {row["storage_class"], *(row["part_classes"] or ())} - {None}
            places[row["urn"]] = Place(row["region"], frozenset(classes))
    return places


def _where(urn: str) -> tuple[str | None, str | None, str | None]:
    """(bucket, Snowflake account, Snowflake database) an asset urn names."""
    scheme, _, rest = urn.partition("://")
    if scheme in ("s3", "s3a", "s3n"):
        return rest.partition("/")[0], None, None
    if scheme == "snowflake":
        account, _, name = rest.partition("/")
        return None, account, name.partition(".")[0].strip('"') or None
    return None, None, None


def _judge(
    found: Propagation,
    policy: Policy,
    carriers: dict[int, tuple[int, int]],
    places: dict[str, Place],
) -> Iterable[Violation]:
    piece = found.piece
    forbidden = [
        (g, group) for g, group in enumerate(found.groups)
        if any(_matches(group, tag) for tag in policy.not_tagged)
    ]  # fmt: skip
    for asset, (g, node) in sorted(carriers.items()):
        urn = piece.names[asset]
        bucket, account, database = _where(urn)
        place = places.get(urn, Place(None, frozenset()))
        broken = []
        if policy.buckets is not None and bucket is not None and bucket not in policy.buckets:
            broken.append(f"bucket {bucket} not among {', '.join(policy.buckets)}")
        if policy.regions is not None and place.region and place.region not in policy.regions:
            broken.append(f"region {place.region} not among {', '.join(policy.regions)}")
        if policy.accounts is not None and account is not None and account not in policy.accounts:
            broken.append(f"account {account} not among {', '.join(policy.accounts)}")
        if policy.databases is not None and database and database not in policy.databases:
            broken.append(f"database {database} not among {', '.join(policy.databases)}")
        for storage_class in sorted(place.storage_classes & set(policy.storage_classes)):
            broken.append(f"storage class {storage_class}")
        for f, group in forbidden:
            if found.pred[f][asset] != UNREACHED:
                tag = group[0] if group[1] is None else f"{group[0]}={group[1]}"
                broken.append(f"reaches an asset tagged {tag}")
        if not broken:
            continue
        origin, path = found.why(g, node)
        key, value = found.groups[g]
        tag = key if value is None else f"{key}={value}"
        for rule in broken:
            yield Violation(policy.name, rule, urn, tag, piece.names[node], origin, path)
