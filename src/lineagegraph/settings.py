"""Settings from `LINEAGEGRAPH_*` environment variables and a TOML file, validated at start-up.

Precedence: explicit overrides (CLI flags) > environment > TOML file > defaults.
Nested keys use `__` in environment variables: `LINEAGEGRAPH_GRAPH__URI=bolt://...` sets
`[graph] uri` of the file.
"""

from __future__ import annotations

import difflib
import ipaddress
import logging
import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from lineagegraph.errors import ConfigError
from lineagegraph.identity import FoldRules

log = logging.getLogger("lineagegraph.settings")

ENV_PREFIX = "LINEAGEGRAPH_"
CONFIG_ENV = "LINEAGEGRAPH_CONFIG"
TEST_ENV_PREFIX = "LINEAGEGRAPH_TEST_"  # the test suite's own switches, e.g. _TEST_RGW
DEFAULT_CONFIG = Path("config/lineagegraph.toml")


class Section(BaseModel):
    """A settings section: unknown keys are typos and fail loudly."""

    model_config = ConfigDict(extra="forbid")

    def check(self) -> None:
        """Rules across fields, checked only when a command uses the section (`with_overrides`),
        so that a half-configured source does not stop commands that never touch it.

        A secret set to nothing (`TOKEN=`, `token = ""`, `--token ""`) is a mistake, never "no
        secret": an empty token would let `Authorization: Bearer` with nothing after it in, and
        an empty password fail later and less clearly. Subclasses call this first."""
        for name, value in self:
            _no_empty_secret(name, value)


def _no_empty_secret(name: str, value: Any) -> None:
    if isinstance(value, SecretStr) and not value.get_secret_value().strip():
        raise ValueError(f"{name} is empty; give a real value or leave the setting unset")


# Query-string keys that carry credentials: refused in [graph] uri, as a user:password@ is.
_CREDENTIAL_KEY = re.compile(
    r"(?i)(user(name)?|pass(word|wd)?|pwd|secret|token|auth\w*|credentials?|\w*key)"
)


class GraphSettings(Section):
    uri: str | None = Field(
        None,
        description="bolt:// or neo4j:// URI of a Neo4j server; unset means the embedded store.",
    )
    user: str = Field("neo4j", description="Neo4j user name.")
    password: SecretStr | None = Field(None, description="Neo4j password (never printed).")
    database: str | None = Field(None, description="Neo4j database name; unset = server default.")
    data_dir: Path = Field(
        Path(".lineagegraph"), description="Directory of the embedded store (FalkorDB files)."
    )
    graph_name: str = Field("lineage", description="Graph (key) name inside the embedded store.")
    batch_size: int = Field(5000, ge=1, le=100_000, description="Rows per UNWIND write batch.")

    @field_validator("password")
    @classmethod
    def _password_given(cls, password: SecretStr | None) -> SecretStr | None:
        """Every command reads [graph], so its secret is checked as it is loaded."""
        _no_empty_secret("password", password)
        return password

    @field_validator("uri")
    @classmethod
    def _known_scheme(cls, uri: str | None) -> str | None:
        if uri in (None, ""):
            return None
        schemes = ("bolt://", "bolt+s://", "bolt+ssc://", "neo4j://", "neo4j+s://", "neo4j+ssc://")
        if not uri.startswith(schemes):
            raise ValueError(f"must start with one of {', '.join(schemes)} (got {redact(uri)!r})")
        query = uri.partition("?")[2]
        keys = [item.partition("=")[0] for item in re.split("[&;]", query) if item]
        if "@" in uri.partition("://")[2].partition("/")[0].partition("?")[0] or any(
            _CREDENTIAL_KEY.fullmatch(key) for key in keys
        ):
            raise ValueError(
                f"must not carry a user or password (got {redact(uri)!r}); set [graph] user "
                "and password (LINEAGEGRAPH_GRAPH__PASSWORD) instead"
            )
        if query and uri.startswith("bolt"):
            raise ValueError(
                f"a bolt:// URI takes no query string (got {redact(uri)!r}); a routing "
                "context (?key=value) needs neo4j://"
            )
        return uri

    def __repr_args__(self) -> Iterator[tuple[str | None, Any]]:
        """The fields as repr shows them: the URI as `location` masks it."""
        for name, value in super().__repr_args__():
            yield name, redact(value) if name == "uri" and value else value

    @property
    def location(self) -> str:
        """Where the store is, as printed and as its harvest lock is named: the URI with any
        query values masked, or the embedded store's data directory."""
        return redact(self.uri) if self.uri else str(self.data_dir)


class IdentitySettings(Section):
    snowflake_account: str | None = Field(
        None, description="Snowflake account in org-account form, used in every Snowflake urn."
    )
    fold_patterns: list[str] = Field(
        default_factory=list,
        description=r"Extra dataset folding regexes over whole segments, e.g. '\d{4}/\d{2}/\d{2}'.",
    )
    path_aliases: dict[str, str] = Field(
        default_factory=dict,
        description="Path prefixes that stand for others, e.g. a bucket mounted or mirrored "
        "locally: {'file:///mnt/s3/raw' = 's3://raw'}. Applied before folding.",
    )

    @model_validator(mode="after")
    def _rules_compile(self) -> IdentitySettings:
        self.rules()  # a bad pattern or alias fails at start-up, naming it
        return self

    def rules(self) -> FoldRules:
        """The naming rules every harvester passes to lineagegraph.identity."""
        return FoldRules(tuple(self.fold_patterns), tuple(self.path_aliases.items()))


class S3Settings(Section):
    """Where and how the S3 harvester lists; buckets/prefixes are what scheduled runs harvest."""

    endpoint_url: str | None = Field(
        None,
        description="S3-compatible endpoint (MinIO, Ceph RGW, ...), e.g. http://127.0.0.1:7480; "
        "unset = AWS.",
    )
    region: str | None = Field(
        None, description="Region to sign requests for; unset = the profile's or AWS_REGION."
    )
    profile: str | None = Field(
        None, description="AWS shared-config profile to take credentials from."
    )
    access_key_id: str | None = Field(
        None, description="Access key id; unset = the profile or the AWS default chain."
    )
    secret_access_key: SecretStr | None = Field(
        None, description="Secret access key (never printed); set with access_key_id."
    )
    session_token: SecretStr | None = Field(
        None, description="Session token of temporary credentials (never printed)."
    )
    addressing_style: Literal["auto", "path", "virtual"] = Field(
        "auto", description="Bucket addressing; 'path' for servers without virtual hosts."
    )
    buckets: list[str] = Field(
        default_factory=list, description="Buckets `harvest s3` lists when no --bucket is given."
    )
    prefixes: list[str] = Field(
        default_factory=list,
        description="Prefixes listed in each of those buckets; empty = the whole bucket.",
    )
    page_size: int = Field(1000, ge=1, le=1000, description="Keys per ListObjectsV2 page.")
    parallelism: int = Field(
        4, ge=1, le=64, description="Prefixes (or inventory files) read at the same time."
    )
    queue_pages: int = Field(
        16,
        ge=1,
        le=1024,
        description="Pages held between the listers and the graph writer; bounds memory.",
    )
    max_delete_share: float = Field(
        0.10,
        ge=0.0,
        le=1.0,
        description="A complete scan that would lose more than this share of its scope (objects "
        "of datasets that vanish entirely, or a fall in the live object count; a rewrite of a "
        "dataset's objects does not count) stops instead (override once with --allow-mass-delete).",
    )
    retry_mode: Literal["standard", "adaptive"] = Field(
        "adaptive", description="botocore retry mode for throttling and transient errors."
    )
    retry_attempts: int = Field(
        10, ge=1, le=100, description="Attempts per request, the first included."
    )
    connect_timeout: float = Field(10.0, gt=0, description="Seconds to connect to S3.")
    read_timeout: float = Field(60.0, gt=0, description="Seconds to wait for an S3 response.")

    @field_validator("endpoint_url")
    @classmethod
    def _http_url(cls, url: str | None) -> str | None:
        return http_url(url)

    @field_validator("buckets")
    @classmethod
    def _bucket_names(cls, buckets: list[str]) -> list[str]:
        bad = [b for b in buckets if not b or "/" in b]
        if bad:
            raise ValueError(f"bucket names only, no s3:// or '/' (got {bad!r})")
        return buckets

    def check(self) -> None:
        super().check()
        if bool(self.access_key_id) != bool(self.secret_access_key):
            raise ValueError("access_key_id and secret_access_key are set together or not at all")
        if self.access_key_id and self.profile:
            raise ValueError("give either profile or access_key_id/secret_access_key, not both")


class SnowflakeSettings(Section):
    """How `harvest snowflake` connects and how far back it reads ACCOUNT_USAGE.

    The section is in use once `account` is set; an unset account leaves it unchecked, so
    users without Snowflake are not asked for a password.
    """

    account: str | None = Field(
        None, description="Account identifier to connect to, e.g. myorg-myaccount."
    )
    user: str | None = Field(None, description="Login name of the harvesting user.")
    role: str | None = Field(
        None,
        description="Role to use; it needs IMPORTED PRIVILEGES on database SNOWFLAKE "
        "or the SNOWFLAKE.GOVERNANCE_VIEWER database role.",
    )
    warehouse: str | None = Field(None, description="Warehouse that runs the harvest queries.")
    database: str | None = Field(
        None, description="Session database; optional, every view read is named in full."
    )
    authenticator: Literal["snowflake", "snowflake_jwt", "externalbrowser"] = Field(
        "snowflake",
        description="'snowflake' (password), 'snowflake_jwt' (key pair) or "
        "'externalbrowser' (SSO in a browser).",
    )
    password: SecretStr | None = Field(
        None, description="Password for authenticator 'snowflake' (never printed)."
    )
    private_key_file: Path | None = Field(
        None, description="PEM private key file for authenticator 'snowflake_jwt'."
    )
    private_key_passphrase: SecretStr | None = Field(
        None, description="Passphrase of an encrypted private_key_file (never printed)."
    )
    lookback_days: int = Field(
        7, ge=1, le=365, description="How far back the first harvest reads ACCESS_HISTORY."
    )
    overlap_hours: float = Field(
        3.0,
        ge=0,
        le=24 * 30,
        description="Each harvest re-reads this much before the last watermark, for the "
        "view's latency (up to 3 hours); replays change nothing but counters.",
    )
    fetch_size: int = Field(
        10_000, ge=1, le=1_000_000, description="Rows fetched and written per batch."
    )
    stage_urls: dict[str, str] = Field(
        default_factory=dict,
        description="URL of stages the role cannot see, by name, e.g. "
        "{'RAW.LANDING.PARTNER' = 's3://partner-drop/feeds/'}; used before SHOW STAGES.",
    )
    login_timeout: int = Field(60, ge=1, le=3600, description="Seconds to wait for a login.")
    host: str | None = Field(
        None, description="Server host, for private links or a test server; unset = derived."
    )
    port: int | None = Field(None, ge=1, le=65535, description="Server port; unset = 443.")
    protocol: Literal["https", "http"] = Field(
        "https", description="'http' only for a local test server."
    )

    @field_validator("stage_urls")
    @classmethod
    def _stage_names_and_urls(cls, stage_urls: dict[str, str]) -> dict[str, str]:
        from lineagegraph.identity import IdentityError, dataset_urn, parse_snowflake_name

        for name, url in stage_urls.items():
            if not url.startswith(("s3://", "s3a://", "s3n://")):
                raise ValueError(f"{name!r}: only s3:// stage URLs can be mapped (got {url!r})")
            try:
                parts = parse_snowflake_name(name.removeprefix("@"))
                dataset_urn(url)
            except IdentityError as exc:
                raise ValueError(f"{name!r}: {exc}") from None
            if len(parts) != 3:
                raise ValueError(f"{name!r}: name stages in full, DATABASE.SCHEMA.STAGE")
        return stage_urls

    def check(self) -> None:
        super().check()
        kind = self.authenticator
        if self.password is not None and kind != "snowflake":
            raise ValueError(f"password is only used with authenticator 'snowflake', not {kind!r}")
        if self.private_key_file is not None and kind != "snowflake_jwt":
            raise ValueError(
                f"private_key_file needs authenticator 'snowflake_jwt' (it is {kind!r})"
            )
        if self.private_key_passphrase is not None and self.private_key_file is None:
            raise ValueError("private_key_passphrase is set but private_key_file is not")
        if self.account is None:
            return
        if not self.user:
            raise ValueError("account is set but user is not")
        if kind == "snowflake" and not self.password:
            raise ValueError("authenticator 'snowflake' needs a password")
        if kind == "snowflake_jwt" and self.private_key_file is None:
            raise ValueError("authenticator 'snowflake_jwt' needs private_key_file")


class SparkSettings(Section):
    """The Spark listener (lineagegraph.spark.install) and `harvest spark --spool`."""

    emit: Literal["graph", "openlineage", "both"] = Field(
        "graph",
        description="Where the listener sends lineage: the graph, OpenLineage JSON lines, or both.",
    )
    spool_dir: Path = Field(
        Path(".lineagegraph/spark-spool"),
        description="Where events wait (JSON lines) while the graph is unreachable; replay them "
        "with `lineagegraph harvest spark --spool DIR`.",
    )
    openlineage_dir: Path = Field(
        Path(".lineagegraph/openlineage"),
        description="Where emit=openlineage writes OpenLineage RunEvents (JSON lines).",
    )
    openlineage_namespace: str = Field(
        "spark", min_length=1, description="Job namespace of the OpenLineage events emitted."
    )
    queue_size: int = Field(
        1000, ge=1, le=1_000_000,
        description="Actions waiting for the worker thread; when full, new ones are dropped and "
        "counted so the job never waits.",
    )  # fmt: skip
    app_name: str | None = Field(
        None,
        description="Name used in transformation urns instead of spark.app.name (give a stable "
        "one when app names carry dates or ids).",
    )
    retry_seconds: float = Field(
        30.0, gt=0,
        description="How long the listener spools before it tries the graph (or the "
        "OpenLineage endpoint) again.",
    )  # fmt: skip
    openlineage_url: str | None = Field(
        None,
        description="Base URL of an OpenLineage HTTP endpoint (`lineagegraph serve`, Marquez), "
        "e.g. http://lineage-host:5000; when set, emit=openlineage posts each RunEvent there "
        "instead of writing it to openlineage_dir.",
    )
    openlineage_endpoint: str = Field(
        "api/v1/lineage", description="Path of the endpoint under openlineage_url."
    )
    openlineage_token: SecretStr | None = Field(
        None,
        description="API key sent as 'Authorization: Bearer <token>' to openlineage_url "
        "(never printed).",
    )
    send_seconds: float = Field(
        60.0, gt=0, le=3600,
        description="How long the listener retries an event the endpoint does not take "
        "(connection errors, 5xx) before it keeps it in openlineage_dir.",
    )  # fmt: skip

    @field_validator("openlineage_url")
    @classmethod
    def _http_url(cls, url: str | None) -> str | None:
        return http_url(url)


class OpenLineageSettings(Section):
    """`harvest openlineage` and `harvest all`: where OpenLineage events are collected."""

    paths: list[Path] = Field(
        default_factory=list,
        description="Files or directories of OpenLineage RunEvents (JSON lines or one event per "
        "file) that `lineagegraph harvest all` reads; each resumes where its last harvest ended.",
    )
    max_event_datasets: int = Field(
        10_000, ge=1,
        description="The most datasets (inputs and outputs) one event may list; an event with "
        "more is refused (skipped and reported by `harvest openlineage`, 413 from `serve`).",
    )  # fmt: skip
    max_event_flows: int = Field(
        100_000, ge=1,
        description="The most FLOWS_TO edges (inputs x outputs) one event may draw; an event "
        "over it keeps its datasets and the job's reads and writes, without FLOWS_TO, and is "
        "reported with a warning.",
    )  # fmt: skip
    follow_links: bool = Field(
        False,
        description="Read event files that a symbolic link under an OpenLineage directory "
        "points to outside it (otherwise they are skipped and reported).",
    )


class ReportSettings(Section):
    """The orphan and cost reports (`lineagegraph orphans`, `lineagegraph cost-report`)."""

    lookback_days: int = Field(
        90, ge=1, le=36_500,
        description="An object read or flowed from (itself or a dataset above it) within this "
        "many days before --as-of is consumed, not orphaned.",
    )  # fmt: skip
    exclude: list[str] = Field(
        default_factory=list,
        description="Globs over S3 keys never reported as orphans, added to the defaults "
        "'**/_SUCCESS' and '**/_temporary/**' ('*' within a path segment, '**' across them).",
    )
    price_table: Path | None = Field(
        None,
        description="A TOML price table used instead of the shipped us-east-1 list prices "
        "(config/prices.toml; copy it to start).",
    )
    top_n: int = Field(10, ge=1, description="How many datasets the reports rank by cost.")


class DbtSettings(Section):
    """`harvest dbt`: where a dbt project's artifacts are and how its relations are named."""

    target_path: Path | None = Field(
        None,
        description="The dbt project's target directory (manifest.json, and catalog.json and "
        "run_results.json when there); unset = dbt is not harvested by `harvest all`.",
    )
    namespace: str | None = Field(
        None,
        description="OpenLineage namespace of a non-Snowflake warehouse, e.g. "
        "postgres://db.example.com:5432, databricks://adb-1.azuredatabricks.net, "
        "duckdb:///data/dev.duckdb (BigQuery needs none). Snowflake projects use "
        "[identity] snowflake_account.",
    )
    column_lineage: bool = Field(
        True, description="Derive column lineage from each model's compiled SQL (sqlglot)."
    )

    @field_validator("target_path", "namespace", mode="before")
    @classmethod
    def _empty_is_unset(cls, value: Any) -> Any:
        return None if value == "" else value


class ServeSettings(Section):
    """`lineagegraph serve`: the HTTP API (OpenLineage in, Marquez-compatible lineage out)."""

    host: str = Field(
        "127.0.0.1",
        description="Address to listen on. Anything but a loopback address needs a token.",
    )
    port: int = Field(5000, ge=0, le=65_535, description="TCP port (Marquez's, 5000, by default).")
    token: SecretStr | None = Field(
        None,
        description="API key clients send as 'Authorization: Bearer <token>' (never printed). "
        "When set, every /api/v1 request needs it, unless open_reads.",
    )
    open_reads: bool = Field(
        False, description="Let GET requests through without the token (writes always need it)."
    )
    max_body_bytes: int = Field(
        16 * 2**20, ge=1024, le=2**30,
        description="Largest request body accepted, compressed and uncompressed alike.",
    )  # fmt: skip
    batch_events: int = Field(
        20_000, ge=1, le=1_000_000,
        description="Spooled events ingested into the graph in one batch at most.",
    )  # fmt: skip
    ingest_seconds: float = Field(
        0.5, gt=0, le=3600, description="How often spooled events are ingested into the graph."
    )
    metrics_ttl_seconds: float = Field(
        15.0, ge=0, le=86_400,
        description="How long /metrics reuses its scan of the graph (0: scan on every scrape); "
        "the event counters and latencies are always live.",
    )  # fmt: skip

    def check(self) -> None:
        super().check()
        if not is_loopback(self.host) and self.token is None:
            raise ValueError(
                f"host {self.host!r} is not a loopback address: set a token "
                "(--token or LINEAGEGRAPH_SERVE__TOKEN) before serving beyond this machine"
            )


def http_url(url: str | None) -> str | None:
    """An http(s) URL setting: empty is unset, anything else must be http:// or https://."""
    if url in (None, ""):
        return None
    if not url.startswith(("http://", "https://")) or len(url.split("://", 1)[1]) == 0:
        raise ValueError(f"must be an http:// or https:// URL (got {redact(url)!r})")
    return url


def is_loopback(host: str) -> bool:
    """127.0.0.0/8, ::1 and 'localhost'; anything else (0.0.0.0, a name) may reach others."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class Settings(BaseSettings):
    """All of lineagegraph's settings; each source adds its own section."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX,
        env_nested_delimiter="__",
        extra="forbid",
    )

    graph: GraphSettings = Field(default_factory=GraphSettings)
    identity: IdentitySettings = Field(default_factory=IdentitySettings)
    spark: SparkSettings = Field(default_factory=SparkSettings)
    s3: S3Settings = Field(default_factory=S3Settings)
    snowflake: SnowflakeSettings = Field(default_factory=SnowflakeSettings)
    openlineage: OpenLineageSettings = Field(default_factory=OpenLineageSettings)
    reports: ReportSettings = Field(default_factory=ReportSettings)
    dbt: DbtSettings = Field(default_factory=DbtSettings)
    sources: dict[str, dict[str, Any]] = Field(
        default_factory=dict,
        description="Settings of the sources that plug-in packages add, one [sources.NAME] "
        "table each (LINEAGEGRAPH_SOURCES__NAME__KEY); each source checks its own.",
    )
    serve: ServeSettings = Field(default_factory=ServeSettings)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        sources: tuple[PydanticBaseSettingsSource, ...] = (init_settings, KnownEnv(settings_cls))
        if _config_path is not None:
            sources += (TomlConfigSettingsSource(settings_cls, toml_file=_config_path),)
        return sources


class KnownEnv(EnvSettingsSource):
    """The environment without unknown LINEAGEGRAPH_* names: a typo there is warned about
    (`warn_unknown_env`), not fatal, since the environment is shared with other programs."""

    def _load_env_vars(self) -> Mapping[str, str | None]:
        known = known_env_names()
        return {
            name: value
            for name, value in super()._load_env_vars().items()
            if not name.upper().startswith(ENV_PREFIX) or _is_known(name.upper(), known)
        }


_config_path: Path | None = None


def config_file(explicit: Path | None = None) -> Path | None:
    """The TOML file: --config, else $LINEAGEGRAPH_CONFIG, else config/lineagegraph.toml."""
    if explicit is not None or os.environ.get(CONFIG_ENV):
        path = Path(explicit or os.environ[CONFIG_ENV])
        if not path.is_file():
            raise ConfigError(f"config file {str(path)!r} does not exist or is not a file")
        return path
    return DEFAULT_CONFIG if DEFAULT_CONFIG.is_file() else None


def load_settings(config: Path | None = None, **overrides: Any) -> Settings:
    """Read and validate every setting; a bad key or value raises ConfigError naming it."""
    global _config_path
    warn_unknown_env(os.environ)
    _config_path = config_file(config)
    try:
        return Settings(**overrides)
    except ValidationError as exc:
        raise ConfigError(_describe(exc, _config_path)) from None
    except (OSError, ValueError) as exc:  # unreadable or malformed TOML
        raise ConfigError(f"cannot read config file {str(_config_path)!r}: {exc}") from None
    finally:
        _config_path = None


def _describe(exc: ValidationError, path: Path | None) -> str:
    """One line per bad key, naming both spellings a user may have used."""
    where = f" (from the environment or {path})" if path else " (from the environment)"
    lines = []
    for err in exc.errors():
        dotted = ".".join(str(p) for p in err["loc"])
        env = ENV_PREFIX + "__".join(str(p) for p in err["loc"]).upper()
        msg = err["msg"] if err["type"] != "extra_forbidden" else "unknown setting"
        lines.append(f"invalid setting {dotted} / {env}: {msg}")
    return "; ".join(lines) + where


def with_overrides(settings: Settings, section: str, **changes: Any) -> Settings:
    """Settings for a command that uses `section`, with its command-line overrides.

    Options left unset (None) keep the configured value; a bad value names its --option. The
    section's rules across fields (`Section.check`) are enforced here, not at start-up.
    """
    given = {k: v for k, v in changes.items() if v is not None}
    current = getattr(settings, section)
    try:
        updated = type(current).model_validate({**current.model_dump(), **given})
    except ValidationError as exc:
        problems = "; ".join(
            f"--{str(e['loc'][0]).replace('_', '-')}: {e['msg']}" for e in exc.errors()
        )
        raise ConfigError(problems) from None
    try:
        updated.check()
    except ValueError as exc:
        field = str(exc).split(" ", 1)[0]
        if field in given:  # about a value given on the command line: name its option
            raise ConfigError(f"--{field.replace('_', '-')}: {exc}") from None
        raise ConfigError(
            f"invalid [{section}] settings ({ENV_PREFIX}{section.upper()}__*): {exc}"
        ) from None
    return settings.model_copy(update={section: updated}) if given else settings


# A password in a URI's userinfo may hold `/` (unencoded secret keys do), never `?` or `#`.
_USERINFO = re.compile(r"(?P<head>[A-Za-z][A-Za-z0-9+.-]*://[^:/@\s?#]*):[^@\s?#]*@")
_URI = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>`]*")
_QUERY_PARTS = re.compile(r"([&;])")


def redact(text: str, secrets: list[str] | tuple[str, ...] = ()) -> str:
    """`text` with URI passwords (`user:***@`), the values of URI query strings
    (`?password=***`: a driver may take credentials there) and the given secret values
    masked."""
    text = _URI.sub(_masked_query, _USERINFO.sub(r"\g<head>:***@", text))
    for secret in sorted(secrets, key=len, reverse=True):
        text = text.replace(secret, "***")
    return text


def _masked_query(match: re.Match[str]) -> str:
    """One URI with every value after its `?` masked (`?a=***&b=***`); keys stay, to read."""
    head, mark, query = match.group(0).partition("?")
    if not mark:
        return head
    parts = _QUERY_PARTS.split(query)
    masked = [
        p if p in "&;" else p.partition("=")[0] + "=***" if "=" in p else "***" for p in parts
    ]
    return f"{head}?{''.join(masked)}"


def secret_values(model: BaseModel) -> list[str]:
    """Every non-empty SecretStr value in a settings tree, to mask wherever it might leak."""
    found: list[str] = []
    for name in type(model).model_fields:
        value = getattr(model, name)
        if isinstance(value, SecretStr) and value.get_secret_value():
            found.append(value.get_secret_value())
        elif isinstance(value, BaseModel):
            found += secret_values(value)
    return found


def warn_unknown_env(environ: Mapping[str, str]) -> None:
    """Name each LINEAGEGRAPH_* variable that is no setting, with the closest one that is."""
    known = known_env_names()
    for name in sorted(environ):
        upper = name.upper()
        if not upper.startswith(ENV_PREFIX) or upper.startswith(TEST_ENV_PREFIX):
            continue
        if _is_known(upper, known):
            continue
        close = difflib.get_close_matches(upper, sorted(known), n=1, cutoff=0.6)
        hint = f"; did you mean {close[0]}?" if close else ""
        log.warning("ignoring unknown environment variable %s%s", name, hint)


def known_env_names() -> set[str]:
    """LINEAGEGRAPH_CONFIG, and LINEAGEGRAPH_SECTION and _SECTION__KEY for every setting."""
    names = {CONFIG_ENV}
    for section, info in Settings.model_fields.items():
        names.add(f"{ENV_PREFIX}{section.upper()}")
        model = info.annotation
        if isinstance(model, type) and issubclass(model, BaseModel):
            names |= {f"{ENV_PREFIX}{section.upper()}__{key.upper()}" for key in model.model_fields}
    return names


def _is_known(upper: str, known: set[str]) -> bool:
    # Deeper keys (a dict setting such as IDENTITY__PATH_ALIASES__X) belong to a known setting;
    # under SOURCES, every key is a plug-in source's own.
    deeper = upper.count("__") > 1 and "__".join(upper.split("__")[:2]) in known
    return upper in known or deeper or upper.startswith(f"{ENV_PREFIX}SOURCES__")
