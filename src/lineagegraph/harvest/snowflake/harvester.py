"""`harvest snowflake`: ACCOUNT_USAGE to the graph, incrementally and in bounded memory.

One run: resume from the last successful watermark (QUERY_START_TIME) minus the overlap, or look
back `lookback_days` the first time; stream ACCESS_HISTORY with `fetchmany`, `fetch_size` rows at
a time, converting each row and folding it into a RunReducer (harvest/reducer.py: nodes are
written as they are first seen, repeated sightings collapse); then write the rest, list
external tables, OBJECT_DEPENDENCIES and TAG_REFERENCES (harvest-time facts), and store the newest
QUERY_START_TIME seen as the watermark. `harvest_run` saves the watermark only after everything
is written, so a failed run resumes where the last good one ended. Replays are idempotent.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import snowflake.connector
from snowflake.connector import SnowflakeConnection
from snowflake.connector.cursor import DictCursor, SnowflakeCursor

from lineagegraph.errors import ConfigError, HarvestError
from lineagegraph.graph.history import delete_assets
from lineagegraph.graph.store import GraphStore
from lineagegraph.graph.writer import GraphWriter
from lineagegraph.harvest.base import HarvestReport, Tick
from lineagegraph.harvest.base import Progress as TickProgress
from lineagegraph.harvest.reducer import RunReducer
from lineagegraph.harvest.snowflake import queries
from lineagegraph.harvest.snowflake.access_history import (
    SYSTEM,
    TABLE_DOMAINS,
    ColumnNames,
    MalformedRow,
    RowConverter,
)
from lineagegraph.harvest.snowflake.schemas import schema_sightings
from lineagegraph.harvest.snowflake.settings import SnowflakeSettings
from lineagegraph.harvest.snowflake.stages import (
    StageResolver,
    describe_unresolved,
    stage_dataset_urns,
    stage_name,
    stage_paths,
)
from lineagegraph.harvest.snowflake.tags import TagKey, references, write_tags
from lineagegraph.identity import (
    FoldRules,
    IdentityError,
    dataset_urn,
    name_of,
    snowflake_urn_from_parts,
    system_of,
)
from lineagegraph.model import Asset, Flow, Item
from lineagegraph.pipeline import harvest_run, last_watermark, now_ms
from lineagegraph.settings import Settings

log = logging.getLogger(__name__)

HOUR_MS = 3_600_000
DAY_MS = 24 * HOUR_MS
ACCESS_HISTORY_LATENCY_MS = 3 * HOUR_MS
MALFORMED_LISTED = 50  # query ids of malformed rows kept for the report; all are counted

GRANT_HINT = (
    "the role needs IMPORTED PRIVILEGES on database SNOWFLAKE "
    "(GRANT IMPORTED PRIVILEGES ON DATABASE SNOWFLAKE TO ROLE {role}) or the "
    "SNOWFLAKE.GOVERNANCE_VIEWER database role "
    "(GRANT DATABASE ROLE SNOWFLAKE.GOVERNANCE_VIEWER TO ROLE {role}); ACCESS_HISTORY also "
    "needs Enterprise Edition or higher"
)
# "does not exist or not authorized", "insufficient privileges": what a role without
# grants on the SNOWFLAKE database sees.
NOT_AUTHORIZED = frozenset({2003, 2043, 3001})
NO_WAREHOUSE = 606
LOGIN_REJECTED = frozenset({390100, 390101, 390102, 390144, 390146})


@dataclass
class SnowflakeReport:
    """What a harvest did, for the CLI and for callers that schedule it."""

    scope: str
    window_start: int
    run_id: str = ""
    status: str = "running"  # the run's, once it is recorded
    watermark: int | None = None
    counts: Counter[str] = field(default_factory=Counter)
    warnings: list[str] = field(default_factory=list)
    malformed: list[tuple[str, str]] = field(default_factory=list)


Progress = Callable[[int], None]


def urn_account(settings: Settings) -> str:
    """The account in Snowflake urns: identity.snowflake_account (org-account form), else the
    connection's account."""
    account = settings.identity.snowflake_account or settings.snowflake.account
    if not account:
        raise ConfigError(
            "no Snowflake account: set snowflake.account (LINEAGEGRAPH_SNOWFLAKE__ACCOUNT), "
            "and identity.snowflake_account if urns should use another (org-account) form"
        )
    return account.lower()


# --- connecting ---------------------------------------------------------------------------


def connect(cfg: SnowflakeSettings) -> SnowflakeConnection:
    """A connection from the [snowflake] settings; bad credentials raise ConfigError."""
    if not cfg.account:
        raise ConfigError("set snowflake.account (LINEAGEGRAPH_SNOWFLAKE__ACCOUNT) to harvest")
    params: dict[str, Any] = {
        "account": cfg.account,
        "user": cfg.user,
        "authenticator": cfg.authenticator,
        "login_timeout": cfg.login_timeout,
        "application": "lineagegraph",
        "session_parameters": {
            "QUERY_TAG": "lineagegraph harvest",
            "CLIENT_OUT_OF_BAND_TELEMETRY_ENABLED": False,
        },
    }
    for key in ("role", "warehouse", "database", "host", "port"):
        if getattr(cfg, key) is not None:
            params[key] = getattr(cfg, key)
    if cfg.host or cfg.port:
        params["protocol"] = cfg.protocol
    if cfg.password is not None:
        params["password"] = cfg.password.get_secret_value()
    if cfg.private_key_file is not None:
        key_file = cfg.private_key_file.expanduser()
        if not key_file.is_file():
            raise ConfigError(f"snowflake.private_key_file {str(key_file)!r} is not a file")
        params["private_key_file"] = str(key_file)
        if cfg.private_key_passphrase is not None:
            params["private_key_file_pwd"] = cfg.private_key_passphrase.get_secret_value()
    try:
        return snowflake.connector.connect(**params)
    except snowflake.connector.errors.Error as exc:
        raise _login_error(cfg, exc) from None
    except (ValueError, TypeError) as exc:  # e.g. a private key that does not decrypt
        raise ConfigError(f"cannot use the Snowflake credentials in settings: {exc}") from None


def _login_error(cfg: SnowflakeSettings, exc: snowflake.connector.errors.Error) -> Exception:
    message = _message(exc)
    where = f"account {cfg.account!r}" + (f" at {cfg.host}:{cfg.port}" if cfg.host else "")
    if exc.errno in LOGIN_REJECTED or exc.sqlstate == "28000":
        what = {
            "snowflake": "snowflake.password",
            "snowflake_jwt": "snowflake.private_key_file and the public key set on the user",
            "externalbrowser": "the identity provider login",
        }[cfg.authenticator]
        return ConfigError(
            f"Snowflake rejected the login of user {cfg.user!r} to {where}: {message} "
            f"(check snowflake.user and {what})"
        )
    return HarvestError(f"cannot connect to Snowflake {where}: {message}")


# --- running statements -------------------------------------------------------------------


@dataclass
class _Session:
    """Runs the harvester's statements and turns Snowflake errors into clear messages."""

    connection: SnowflakeConnection
    role: str

    def execute(self, what: str, sql: str, params: dict[str, Any] | None = None) -> SnowflakeCursor:
        cursor = self.connection.cursor()
        try:
            cursor.execute(sql, params)
        except snowflake.connector.errors.Error as exc:
            raise self.explain(exc, what) from None
        return cursor

    def fetch(self, cursor: SnowflakeCursor, size: int, what: str) -> list[Any]:
        try:
            return list(cursor.fetchmany(size))
        except snowflake.connector.errors.Error as exc:
            raise self.explain(exc, what) from None

    def stage_rows(self, name: str) -> list[dict[str, Any]]:
        """SHOW STAGES output for one stage name (errors are left to the resolver)."""
        cursor = self.connection.cursor(DictCursor)
        cursor.execute(queries.SHOW_STAGES_LIKE, {"name": name})
        return list(cursor.fetchall())  # type: ignore[arg-type]

    def explain(self, exc: snowflake.connector.errors.Error, what: str) -> HarvestError:
        message = _message(exc)
        view = what.rpartition(".")[2]
        if exc.errno in NOT_AUTHORIZED and (view in message.upper() or "SNOWFLAKE" in message):
            hint = GRANT_HINT.format(role=self.role)
            return HarvestError(f"cannot read {what}: {message}; {hint}")
        if exc.errno == NO_WAREHOUSE:
            return HarvestError(
                f"cannot read {what}: {message}; set snowflake.warehouse to a warehouse the "
                "role may use"
            )
        return HarvestError(f"reading {what} failed: {message}")


def _message(exc: snowflake.connector.errors.Error) -> str:
    text = " ".join(str(exc.msg or exc).split())
    return text or type(exc).__name__


# --- the harvest --------------------------------------------------------------------------


def harvest(
    store: GraphStore,
    settings: Settings,
    connection: SnowflakeConnection,
    *,
    now: int | None = None,
    progress: Progress | None = None,
) -> SnowflakeReport:
    """Harvest ACCESS_HISTORY since the last watermark into `store`; see the module doc.

    `now` (epoch ms) is the harvest time: the first run's look-back ends there, and it stamps
    what listings saw (OBJECT_DEPENDENCIES, external tables). Raises HarvestError or
    ConfigError with a message that says what to fix; the watermark is then left as it was.
    """
    cfg = settings.snowflake
    account = urn_account(settings)
    now = now_ms() if now is None else now
    previous = last_watermark(store, SYSTEM, account)
    if previous is None:
        start = now - cfg.lookback_days * DAY_MS
    else:
        start = previous - int(cfg.overlap_hours * HOUR_MS)
    report = SnowflakeReport(scope=account, window_start=start)
    session = _Session(connection, cfg.role or "<your role>")
    with harvest_run(store, SYSTEM, account) as (run, writer):
        report.run_id = run.id
        report.counts = run.counts
        resolver = StageResolver.from_settings(session.stage_rows, cfg.stage_urls)
        rules = settings.identity.rules()
        listing = _Listing(account, now, rules, resolver, store, writer, session, report)
        views = listing.dependent_views()
        converter = RowConverter(
            account,
            resolver,
            rules,
            views,
            run.counts,
            known_columns(store),
            settings.masking.names,
            frozenset(p.upper() for p in cfg.unmasking_policies),
        )
        windows = _access_history_windows(session, cfg, start)
        newest = write_windows(windows, converter, writer, report, progress)
        if run.counts["rows"] == 0:
            _check_edition(session, start, now)
        # Listings last: what queries saw first keeps its event times (first_seen never drops).
        listing.object_dependencies(listing.external_tables())
        if cfg.tags:
            listing.tags(run.id, cfg.tag_key)
        if cfg.schemas:
            listing.schemas(start)
        report.warnings.extend(describe_unresolved(resolver.unresolved))
        # never backwards: a replayed overlap may hold nothing newer than the last watermark
        run.watermark = max((w for w in (newest, previous) if w is not None), default=None)
        report.watermark = run.watermark
    report.status = run.status
    report.warnings += run.warnings
    return report


def known_columns(store: GraphStore) -> ColumnNames:
    """The column names the graph holds for an asset, read as the harvest needs them."""

    def names(urn: str) -> list[str]:
        return [row["name"] for row in store.read("snowflake_dataset_columns", {"urn": urn})]

    return names


def _access_history_windows(
    session: _Session, cfg: SnowflakeSettings, start: int
) -> Iterator[list[Any]]:
    """ACCESS_HISTORY rows since `start`, oldest first, `fetch_size` rows at a time."""
    what = queries.ACCESS_HISTORY_VIEW
    cursor = session.execute(what, queries.ACCESS_HISTORY_SINCE, {"start_ms": start})
    while rows := session.fetch(cursor, cfg.fetch_size, what):
        yield rows


def write_windows(
    windows: Iterable[Sequence[Any]],
    converter: RowConverter,
    writer: GraphWriter,
    report: SnowflakeReport,
    progress: Progress | None = None,
) -> int | None:
    """Convert each window of ACCESS_HISTORY rows into the RunReducer, writing what it releases
    before the next window is read, then the rest (harvest/reducer.py); returns the newest
    query start time seen (malformed rows included: they were read)."""
    counts = converter.counts
    reducer = RunReducer()
    newest: int | None = None
    for rows in windows:
        for row in rows:
            counts["rows"] += 1
            newest = _newer(newest, row[1])
            try:
                outputs = converter.convert_row(row)
            except MalformedRow as exc:
                counts["rows_malformed"] += 1
                if len(report.malformed) < MALFORMED_LISTED:
                    report.malformed.append((exc.query_id, exc.reason))
                log.warning("skipped malformed ACCESS_HISTORY row: %s", exc)
                continue
            reducer.add(outputs, int(row[1]), str(row[0]), row[2])
        reducer.write_window(writer)
        if progress is not None:
            progress(counts["rows"])
    finish_run(reducer, writer)
    return newest


def finish_run(reducer: RunReducer, writer: GraphWriter) -> None:
    """The reducer's last writes, then the DROPs as deletions (graph.history): after every
    sighting, which history weighs against them whatever order they came in."""
    delete_assets(writer.store, reducer.write_run(writer))


def _newer(newest: int | None, at: Any) -> int | None:
    try:
        value = int(at)
    except (TypeError, ValueError):
        return newest
    return value if newest is None or value > newest else newest


def _check_edition(session: _Session, start: int, now: int) -> None:
    """No ACCESS_HISTORY rows at all while QUERY_HISTORY shows settled writes: the view is
    empty because the account is Standard Edition (or the role sees none of it)."""
    end = now - ACCESS_HISTORY_LATENCY_MS
    if end <= start:
        return
    what = queries.QUERY_HISTORY_VIEW
    cursor = session.execute(
        what, queries.WRITING_QUERIES_BETWEEN, {"start_ms": start, "end_ms": end}
    )
    writes = int((session.fetch(cursor, 1, what) or [[0]])[0][0])
    if writes:
        raise HarvestError(
            f"{queries.ACCESS_HISTORY_VIEW} has no rows since the window start while "
            f"{queries.QUERY_HISTORY_VIEW} lists {writes} writing queries in it: ACCESS_HISTORY "
            "needs Enterprise Edition or higher and is empty on Standard Edition accounts; "
            "there is no query-level lineage to harvest there"
        )


@dataclass
class _Listing:
    """What Snowflake lists as of now: external tables' locations and object dependencies.

    Their edges carry the harvest time (docs/lineage.md, views). Tables named only by
    OBJECT_DEPENDENCIES are created if missing but not marked seen: a dependency outlives a
    drop, so it must not undelete anything.
    """

    account: str
    now: int
    rules: FoldRules
    stages: StageResolver
    store: GraphStore
    writer: GraphWriter
    session: _Session
    report: SnowflakeReport
    dependencies_unavailable: str | None = None

    def external_tables(self) -> set[str]:
        """Flows from each external table's location; returns the tables listed."""
        cursor = self.session.connection.cursor(DictCursor)
        try:
            cursor.execute(queries.SHOW_EXTERNAL_TABLES)
            rows: list[dict[str, Any]] = list(cursor.fetchall())  # type: ignore[arg-type]
        except snowflake.connector.errors.Error as exc:
            self._warn(
                f"external tables not listed ({_message(exc)}); their locations come from "
                "OBJECT_DEPENDENCIES, stage root only"
            )
            return set()
        listed: set[str] = set()
        for row in rows:
            try:
                values = external_table_values(row, self.account, self.stages, self.rules, self.now)
            except IdentityError as exc:
                self._warn(f"external table {row.get('name')!r}: location not usable ({exc})")
                continue
            listed.update(v.dst for v in values if isinstance(v, Flow))
            self.writer.add_all(values)
            self.report.counts["external_table_locations"] += len(values) // 2
        self.writer.flush()
        return listed

    def dependent_views(self) -> set[str]:
        """The views OBJECT_DEPENDENCIES lists (their upstreams never come from base objects)."""
        what = queries.OBJECT_DEPENDENCIES_VIEW
        try:
            cursor = self.session.execute(what, queries.DEPENDENT_VIEWS)
            views: set[str] = set()
            while rows := self.session.fetch(cursor, 10_000, what):
                views.update(
                    snowflake_urn_from_parts(self.account, *parts)
                    for parts in map(_parts, rows)
                    if parts is not None
                )
        except HarvestError as exc:
            self.dependencies_unavailable = str(exc)
            self._warn(
                f"{exc} (or the SNOWFLAKE.OBJECT_VIEWER database role); view upstreams come "
                "from base objects only"
            )
            return set()
        return views

    def object_dependencies(self, listed_external: set[str]) -> None:
        """Flows from each view's (and external table's) referenced objects."""
        if self.dependencies_unavailable:
            return
        what = queries.OBJECT_DEPENDENCIES_VIEW
        cursor = self.session.execute(what, queries.OBJECT_DEPENDENCIES)
        while rows := self.session.fetch(cursor, 10_000, what):
            ensure: dict[str, dict[str, Any]] = {}
            flows: list[Flow] = []
            for row in rows:
                referencing = _parts(row[:3])
                if referencing is None:
                    continue
                view = snowflake_urn_from_parts(self.account, *referencing)
                ensure[view] = self._ensure_row(view, row[3])
                for source in self._referenced(row, view, listed_external, ensure):
                    flows.append(Flow(source, view, self.now))
            self.store.write_batches("snowflake_ensure_tables", ensure.values(), ("urn",))
            self.writer.add_all(flows)
            self.writer.flush()
            self.report.counts["dependency_pairs"] += len(flows)

    def _referenced(
        self, row: tuple[Any, ...], view: str, listed_external: set[str], ensure: dict[str, Any]
    ) -> Iterable[str]:
        parts, domain = _parts(row[4:7]), str(row[7]).lower()
        if parts is None:
            return []
        if domain in TABLE_DOMAINS:
            urn = snowflake_urn_from_parts(self.account, *parts)
            ensure[urn] = self._ensure_row(urn, row[7])
            return [urn]
        if domain == "stage" and view not in listed_external:
            urns = stage_dataset_urns(
                self.account, parts, self.stages.resolve(parts, None), [], self.rules
            )
            for urn in urns:
                self.writer.add(self._asset(urn, "Dataset", {}))
            return urns
        return []

    def tags(self, run_id: str, form: TagKey) -> None:
        """TAG_REFERENCES read whole and written as the difference (harvest/snowflake/tags.py);
        a role that cannot read it gets a warning and the rest of the harvest."""
        what = queries.TAG_REFERENCES_VIEW
        try:
            cursor = self.session.execute(what, queries.TAG_REFERENCES)
            rows: list[Any] = []
            while batch := self.session.fetch(cursor, 10_000, what):
                rows.extend(batch)
        except HarvestError as exc:
            self._warn(f"{exc}; no tags read (snowflake.tags = false stops trying)")
            return
        counts = self.report.counts
        found = references(rows, self.account, form, counts)
        prefix = f"snowflake://{self.account}/"
        write_tags(
            found, self.store, self.writer, prefix, now=self.now, run_id=run_id, counts=counts
        )

    def schemas(self, start: int) -> None:
        """COLUMNS as schema versions (harvest/snowflake/schemas.py), of the tables in the
        graph; a role that cannot read it gets a warning and the rest of the harvest."""
        what = queries.COLUMNS_VIEW
        try:
            cursor = self.session.execute(what, queries.COLUMNS, {"start_ms": start})
            rows = (row for batch in self._batches(cursor, what) for row in batch)
            problems: list[str] = []  # a table's rows may straddle batches: read as one stream
            self.writer.add_all(schema_sightings(rows, self.account, self.now, problems))
        except HarvestError as exc:
            self._warn(f"{exc}; no schemas read (snowflake.schemas = false stops trying)")
            return
        self.writer.flush()
        for problem in problems:
            self._warn(problem)

    def _batches(self, cursor: SnowflakeCursor, what: str) -> Iterator[list[Any]]:
        while batch := self.session.fetch(cursor, 10_000, what):
            yield batch

    def _ensure_row(self, urn: str, domain: Any) -> dict[str, Any]:
        props = {"domain": str(domain).capitalize()}
        return {
            "urn": urn,
            "system": SYSTEM,
            "name": name_of(urn),
            "seen": self.now,
            "props": props,
        }

    def _asset(self, urn: str, kind: Any, props: dict[str, Any]) -> Asset:
        return Asset(urn, kind, system_of(urn), name_of(urn), self.now, props)

    def _warn(self, message: str) -> None:
        log.warning(message)
        self.report.warnings.append(message)


def external_table_values(
    row: dict[str, Any], account: str, stages: StageResolver, rules: FoldRules, now: int
) -> list[Item]:
    """The :Table of one SHOW EXTERNAL TABLES row, then each dataset of its location and the
    flow from it. `location` is a URL, or `@stage/path` when the stage is named. Raises
    IdentityError for a location without an urn (gcs://, azure://)."""
    table = snowflake_urn_from_parts(account, row["database_name"], row["schema_name"], row["name"])
    location = str(row.get("location") or "")
    if location.startswith("@"):
        stage = stage_name(location.split("/", 1)[0], from_metadata=False)
        paths = stage_paths(location, stage, row["database_name"], row["schema_name"])
        sources = stage_dataset_urns(account, stage, stages.resolve(stage, None), paths, rules)
    else:
        sources = [dataset_urn(location, rules)]
    values: list[Item] = [
        Asset(table, "Table", SYSTEM, name_of(table), now, {"domain": "External table"})
    ]
    for source in sources:
        values.append(Asset(source, "Dataset", system_of(source), name_of(source), now, {}))
        values.append(Flow(source, table, now))
    return values


def _parts(values: tuple[Any, ...]) -> tuple[str, str, str] | None:
    if not all(isinstance(v, str) and v for v in values):
        return None
    return values[0], values[1], values[2]


# --- the source, as `harvest snowflake` and `harvest all` run it ---------------------------


def when(ms: int | None) -> str:
    if ms is None:
        return "none"
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M:%SZ")


def summary(report: SnowflakeReport) -> str:
    """The line a person reads about a harvest."""
    c = report.counts
    return (
        f"{report.scope}: {c['rows']:,} ACCESS_HISTORY rows since {when(report.window_start)}: "
        f"{c['queries_writing']:,} writing and {c['queries_reading']:,} reading queries, "
        f"{c['table_pairs']:,} table and {c['column_pairs']:,} column lineage pairs, "
        f"{c['drops']:,} drops, {c['rows_malformed']:,} malformed rows skipped, "
        f"{c['tags']:,} tags ({c['tags_stated']:,} new or changed, {c['tags_removed']:,} unset); "
        f"watermark {when(report.watermark)}; run {report.run_id}: {report.status}"
    )


def warnings(report: SnowflakeReport) -> list[str]:
    """Malformed rows (the first MALFORMED_LISTED by query id), then the other warnings."""
    found = [f"skipped malformed row of query {q}: {reason}" for q, reason in report.malformed]
    hidden = report.counts["rows_malformed"] - len(report.malformed)
    if hidden > 0:
        found.append(f"{hidden:,} more malformed rows skipped")
    return found + report.warnings


class SnowflakeHarvester:
    """`harvest snowflake`: ACCESS_HISTORY since the last watermark, with the [snowflake]
    connection settings."""

    name = "snowflake"
    section = "snowflake"
    needs = "[snowflake] account"

    def not_configured(self, settings: Settings) -> str | None:
        return None if settings.snowflake.account else "no [snowflake] account"

    def run(
        self, store: GraphStore, settings: Settings, *, progress: TickProgress
    ) -> list[HarvestReport]:
        urn_account(settings)  # a missing account is a settings error before any connection
        started = time.monotonic()

        def rows(count: int) -> None:
            rate = count / max(time.monotonic() - started, 1e-9)
            progress(Tick("snowflake", count, "ACCESS_HISTORY rows", rate))

        connection = connect(settings.snowflake)
        try:
            report = harvest(store, settings, connection, progress=rows)
        finally:
            connection.close()
        return [
            HarvestReport(
                report.run_id,
                SYSTEM,
                report.scope,
                report.status,
                report.counts,
                report.watermark,
                warnings(report),
                [],
                summary(report),
            )
        ]
