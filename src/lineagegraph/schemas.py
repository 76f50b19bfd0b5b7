"""Schemas over time (docs/graph-model.md): the (column, type) set an asset has, as each source
reports it, kept as versions: one per change, dated by the source's event time.

A source's sightings of an asset's schema, in time order, collapse into runs of the same
schema; a version is one run: when it was first reported (`at`, the change), the latest sighting
in it (`last`), its hash and its fields. Writing a sighting into the versions held (the
graph's, a reducer's) gives the versions every sighting in time order would give, whatever order
they come in, except one case: a sighting older than the newest one of a different schema lands
inside that schema's run, and what the run reported between is not known; the run is then split
at its first and last sightings (a late harvest of older facts may move a change later: the
docs say so). Pure values, no store.
"""

from __future__ import annotations

import bisect
import hashlib
import itertools
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

Fields = tuple[tuple[str, str | None], ...]  # (column, type) in the order the source lists


@dataclass(frozen=True, slots=True)
class SchemaSeen:
    """Source `source` reported that asset `asset` had columns `fields` at `at` (epoch ms)."""

    asset: str
    source: str
    at: int
    fields: Fields


@dataclass(frozen=True, slots=True)
class Version:
    """A run of sightings of one schema: first reported at `at`, last at `last`."""

    at: int
    last: int
    hash: str
    fields: Fields


@dataclass(frozen=True, slots=True)
class Change:
    """What changed from one version to the next of the same source, at `at`."""

    at: int
    source: str
    added: tuple[tuple[str, str | None], ...] = ()
    dropped: tuple[tuple[str, str | None], ...] = ()
    retyped: tuple[tuple[str, str | None, str | None], ...] = ()  # (column, old, new)

    @property
    def broken(self) -> tuple[str, ...]:
        """The columns dropped or retyped: they break what reads them; an added one does not."""
        return (*(c for c, _ in self.dropped), *(c for c, _, _ in self.retyped))

    @property
    def breaking(self) -> bool:
        return bool(self.broken)

    def summary(self) -> str:
        """The change in words: `+c (type)`, `-c`, `c: old -> new`."""
        parts = [f"+{c}" + (f" {t}" if t else "") for c, t in self.added]
        parts += [f"-{c}" for c, _ in self.dropped]
        parts += [f"{c}: {old} -> {new}" for c, old, new in self.retyped]
        return ", ".join(parts)


def schema_hash(fields: Fields) -> str:
    """The same hash for the same (column, type) set: order and case of types do not count."""
    canon = sorted((name, (kind or "").upper()) for name, kind in fields)
    return hashlib.sha256(json.dumps(canon).encode()).hexdigest()[:16]


def fields_json(fields: Fields) -> str:
    """Fields as stored on a :SchemaVersion: a JSON list of [name, type]."""
    return json.dumps([list(f) for f in fields], ensure_ascii=False)


def fields_of(text: str) -> Fields:
    return tuple((str(name), kind) for name, kind in json.loads(text))


def insert(versions: list[Version], at: int, hash_: str, fields: Fields) -> None:
    """Fold the sighting (at, hash) into `versions` (sorted by `at`, neighbours differ)."""
    if versions and versions[-1].at <= at:  # the common case: a report newer than the last
        i = len(versions) - 1
        if versions[i].hash == hash_:
            if at > versions[i].last:
                held = versions[i]
                versions[i] = Version(held.at, at, hash_, held.fields)
            return
    else:
        i = bisect.bisect_right(versions, at, key=lambda v: v.at) - 1
    seen = Version(at, at, hash_, fields)
    if i >= 0:
        held = versions[i]
        if held.hash == hash_:
            versions[i] = Version(held.at, max(held.last, at), held.hash, held.fields)
            return
        if held.at == at:  # two schemas at one time: the larger hash, on every order
            if held.last == at and hash_ > held.hash:
                versions[i] = seen
                _join(versions, i)
            return
        if held.last > at:  # inside another schema's run: split it at its ends
            versions[i : i + 1] = [
                Version(held.at, held.at, held.hash, held.fields),
                seen,
                Version(held.last, held.last, held.hash, held.fields),
            ]
            return
    versions.insert(i + 1, seen)
    _join(versions, i + 1)


def _join(versions: list[Version], i: int) -> None:
    """Merge version i with the next one when they hold the same schema."""
    if i + 1 < len(versions) and versions[i + 1].hash == versions[i].hash:
        nxt = versions.pop(i + 1)
        held = versions[i]
        versions[i] = Version(held.at, max(held.last, nxt.last), held.hash, held.fields)


def merged(held: Sequence[Version], new: Iterable[Version]) -> list[Version]:
    """`held` with the first and last sightings of each version of `new` folded in."""
    out = list(held)
    for v in new:
        for at in dict.fromkeys((v.at, v.last)):
            insert(out, at, v.hash, v.fields)
    return out


@dataclass
class SchemaLog:
    """Sightings collapsed into versions per (asset, source): memory by changes, not by
    sightings (every event of a job repeats its schemas)."""

    versions: dict[tuple[str, str], list[Version]] = field(default_factory=dict)
    # id(fields) -> (fields, hash): mappers hand the same fields object for every run of a job,
    # so it is hashed once, not rehashed per report; the object is kept, so its id stays its own
    _hashes: dict[int, tuple[Fields, str]] = field(default_factory=dict)

    def add(self, seen: SchemaSeen, at: int | None = None) -> None:
        """A sighting, at its own time or `at` (a reducer's sighting time)."""
        known = self._hashes.get(id(seen.fields))
        if known is not None and known[0] is seen.fields:
            hash_ = known[1]
        else:
            if len(self._hashes) > 10_000:
                self._hashes.clear()
            hash_ = schema_hash(seen.fields)
            self._hashes[id(seen.fields)] = (seen.fields, hash_)
        held = self.versions.setdefault((seen.asset, seen.source), [])
        insert(held, seen.at if at is None else at, hash_, seen.fields)

    def sightings(self) -> Iterator[SchemaSeen]:
        """Each version's first and last sightings: what folds into another log the same."""
        for (asset, source), versions in self.versions.items():
            for v in versions:
                for at in dict.fromkeys((v.at, v.last)):
                    yield SchemaSeen(asset, source, at, v.fields)

    def __len__(self) -> int:
        return len(self.versions)

    def clear(self) -> None:
        self.versions.clear()


def changes(source: str, versions: Sequence[Version]) -> list[Change]:
    """The changes between consecutive versions of one source, oldest first."""
    out = []
    for old, new in itertools.pairwise(versions):
        before, after = dict(old.fields), dict(new.fields)
        out.append(
            Change(
                new.at,
                source,
                added=tuple((c, t) for c, t in new.fields if c not in before),
                dropped=tuple((c, t) for c, t in old.fields if c not in after),
                retyped=tuple(
                    (c, before[c], t)
                    for c, t in new.fields
                    if c in before and (before[c] or "").upper() != (t or "").upper()
                ),
            )
        )
    return out


def version_of(row: Mapping[str, Any]) -> Version:
    """A version as a schema statement returns it (at, last, hash, fields)."""
    return Version(row["at"], row["last"], row["hash"], fields_of(row["fields"]))


def changes_by_asset(rows: Iterable[Mapping[str, Any]]) -> dict[str, list[Change]]:
    """Each asset's changes, oldest first, from the rows of a statement that returns every
    version (asset, source, at, last, hash, fields) of each asset it names, each source's oldest
    first: a change needs the version before it, whenever that was reported."""
    by_asset: dict[str, dict[str, list[Version]]] = {}
    for row in rows:
        by_asset.setdefault(row["asset"], {}).setdefault(row["source"], []).append(version_of(row))
    return {
        urn: sorted(
            (c for source, vs in sources.items() for c in changes(source, vs)),
            key=lambda c: (c.at, c.source),
        )
        for urn, sources in sorted(by_asset.items())
    }
