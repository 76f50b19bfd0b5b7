"""The S3 bridge: from a stage named in ACCESS_HISTORY to the S3 dataset it reads or writes.

ACCESS_HISTORY names a stage but not its URL nor the path a COPY used. The URL comes from the
`stage_urls` setting or `SHOW STAGES` (cached per run); the path after `@stage` comes from the
query text. `COPY INTO t FROM @raw.land.feeds/partner/ PATTERN='.*csv'` with the stage at
`s3://drop/in/` yields the dataset `s3://drop/in/partner`: PATTERN and FILES do not change it.
A stage that cannot be resolved becomes a placeholder dataset and the run warns, so no lineage
is dropped (docs/lineage.md, bridges).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from lineagegraph.identity import (
    FoldRules,
    IdentityError,
    dataset_urn,
    parse_snowflake_name,
    quote_snowflake_name,
    snowflake_stage_placeholder_urn,
)

log = logging.getLogger(__name__)

StageName = tuple[str, str, str]
"""A stage's database, schema and name, as stored (quotes stripped)."""

# Runs one bound statement and returns its rows as dicts keyed by column name.
Lookup = Callable[[str], list[dict[str, Any]]]

_IDENT = r'(?:"(?:[^"]|"")+"|[A-Za-z_][A-Za-z0-9_$]*)'
# `@name`, `@db.sch.name`, `@"Quoted"` and an optional `/path`, as written in COPY, SELECT ...
# FROM @stage, LIST and the like. `@~` (user stage) and `@%t` (table stage) do not match: they
# are internal and named by ACCESS_HISTORY without a path to take.
_STAGE_REFERENCE = re.compile(rf"@(?P<name>{_IDENT}(?:\.{_IDENT}){{0,2}})(?P<path>/[^\s'\";),]*)?")


@dataclass(frozen=True)
class Stage:
    """What a stage resolved to: its URL when external and known, else why not."""

    url: str | None
    internal: bool = False
    problem: str | None = None


def stage_name(text: str, *, from_metadata: bool = True) -> StageName:
    """A fully qualified stage name split into parts.

    >>> stage_name('RAW.LAND."Drop Zone"')
    ('RAW', 'LAND', 'Drop Zone')
    """
    parts = parse_snowflake_name(text.removeprefix("@"), from_metadata=from_metadata)
    if len(parts) != 3:
        raise IdentityError(f"stage name is not DATABASE.SCHEMA.STAGE: {text!r}")
    return parts[0], parts[1], parts[2]


def is_unnamed_stage(text: str) -> bool:
    """A user stage (`@~`) or a table stage (`@%T`): internal, with no name of its own."""
    return text.removeprefix("@").startswith(("~", "%"))


def qualified_stage_name(text: str, database: str | None, schema: str | None) -> StageName:
    """An ACCESS_HISTORY stage name, qualified with the query's database and schema.

    Snowflake writes a stage name the way the query named it: `@RAW.LAND.FEEDS` when qualified,
    `@FEEDS` when not. A qualified name is used as stored; a partial one is SQL text as the
    user typed it (unquoted parts upper-cased) and takes its missing parts from the query's
    current database and schema in QUERY_HISTORY, as Snowflake resolved it.

    >>> qualified_stage_name("@landing_stage", "RAW", "LAND")
    ('RAW', 'LAND', 'LANDING_STAGE')
    >>> qualified_stage_name("@RAW.LAND.FEEDS", None, None)
    ('RAW', 'LAND', 'FEEDS')
    """
    parts = parse_snowflake_name(text.removeprefix("@"), from_metadata=True)
    if len(parts) == 3:
        return parts[0], parts[1], parts[2]
    typed = parse_snowflake_name(text.removeprefix("@"))
    wanted = [database, schema][: 3 - len(typed)]
    context = [part for part in wanted if part]
    if len(context) < len(wanted):
        raise IdentityError(
            f"stage name {text!r} is not qualified and QUERY_HISTORY gives the query no "
            "current database and schema"
        )
    first, second, third = [*context, *typed]
    return first, second, third


def stage_paths(
    query_text: str | None, stage: StageName, database: str | None, schema: str | None
) -> list[str]:
    """The paths after each `@stage` in the query text that names `stage`, in order, distinct.

    Names in SQL text follow SQL rules (unquoted parts upper-cased) and are qualified with the
    query's current database and schema from QUERY_HISTORY. An empty list means the text did
    not show the path (no text, or the stage was reached another way).

    >>> stage_paths("COPY INTO t FROM @land.feeds/partner/x/ PATTERN='.*'", ("RAW", "LAND",
    ...     "FEEDS"), "RAW", "PUBLIC")
    ['partner/x/']
    >>> stage_paths("copy into @\\"Out\\" from t", ("RAW", "S", "Out"), "RAW", "S")
    ['']
    """
    if not query_text:
        return []
    found: list[str] = []
    for match in _STAGE_REFERENCE.finditer(query_text):
        try:
            parts = parse_snowflake_name(match.group("name"))
        except IdentityError:
            continue
        context = [database, schema][: 3 - len(parts)]
        if tuple([*context, *parts]) != stage:
            continue
        path = (match.group("path") or "").lstrip("/")
        if path not in found:
            found.append(path)
    return found


def stage_dataset_urns(
    account: str, stage: StageName, resolved: Stage, paths: Sequence[str], rules: FoldRules
) -> list[str]:
    """The dataset urn of each path under a resolved stage, or the stage's placeholder."""
    if resolved.url is None:
        return [placeholder_urn(account, stage)]
    base = resolved.url.rstrip("/")
    urns: list[str] = []
    for path in paths or [""]:
        urn = dataset_urn(f"{base}/{path}" if path else base, rules)
        if urn not in urns:
            urns.append(urn)
    return urns


def placeholder_urn(account: str, stage: StageName) -> str:
    """`snowflake://{account}/@DB.SCHEMA.STAGE`: the dataset of a stage without a known URL."""
    name = quote_snowflake_name(stage)
    return snowflake_stage_placeholder_urn(account, name, from_metadata=False)


@dataclass
class StageResolver:
    """Resolves stage names to URLs: the `stage_urls` setting first, then `SHOW STAGES`.

    Answers are cached for the run, failures included, so each stage costs at most one query.
    `unresolved` keeps the external stages that became placeholders and why, for the warning.
    """

    lookup: Lookup | None
    mapping: Mapping[StageName, str] = field(default_factory=dict)
    unresolved: dict[StageName, str] = field(default_factory=dict)
    _cache: dict[StageName, Stage] = field(default_factory=dict)

    @classmethod
    def from_settings(cls, lookup: Lookup | None, stage_urls: Mapping[str, str]) -> StageResolver:
        """`stage_urls` keys are typed by users: SQL rules apply (unquoted parts upper-cased)."""
        mapping = {stage_name(k, from_metadata=False): url for k, url in stage_urls.items()}
        return cls(lookup, mapping)

    def resolve(self, stage: StageName, kind: str | None) -> Stage:
        """The stage's URL. `kind` is ACCESS_HISTORY's stageKind: named internal, table and
        user stages are kept in Snowflake, so they are placeholders without a warning."""
        if stage in self._cache:
            return self._cache[stage]
        if stage in self.mapping:
            resolved = Stage(self.mapping[stage])
        elif kind is not None and "external" not in kind.lower():
            resolved = Stage(None, internal=True)
        else:
            resolved = self._show(stage)
        if resolved.problem:
            self.unresolved[stage] = resolved.problem
            log.warning("stage %s: %s", quote_snowflake_name(stage), resolved.problem)
        self._cache[stage] = resolved
        return resolved

    def _show(self, stage: StageName) -> Stage:
        if self.lookup is None:
            return Stage(None, problem="not in the stage_urls setting")
        try:
            rows = self.lookup(stage[2])
        except Exception as exc:  # a stage the role may not list: warn, keep the lineage
            return Stage(None, problem=f"SHOW STAGES failed ({_first_line(exc)})")
        for row in rows:
            if _row_names(row) == stage:
                url = (row.get("url") or "").strip()
                if url:
                    return Stage(url)
                if str(row.get("type") or "").upper().startswith("INTERNAL"):
                    return Stage(None, internal=True)
                return Stage(None, problem="SHOW STAGES gives it no URL")
        return Stage(
            None,
            problem="not visible to the role (SHOW STAGES does not list it); grant USAGE on "
            "it or map it in the snowflake.stage_urls setting",
        )


def _row_names(row: Mapping[str, Any]) -> StageName:
    return (str(row.get("database_name")), str(row.get("schema_name")), str(row.get("name")))


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def describe_unresolved(unresolved: Mapping[StageName, str]) -> Iterable[str]:
    """One warning line per stage that became a placeholder."""
    for stage, problem in sorted(unresolved.items()):
        name = quote_snowflake_name(stage)
        yield f"stage {name} has no known URL ({problem}); its lineage goes to a placeholder"
