"""Settings from `LINEAGEGRAPH_*` environment variables and a TOML file, validated at start-up.

Precedence: explicit overrides (CLI flags) > environment > TOML file > defaults.
Nested keys use `__` in environment variables: `LINEAGEGRAPH_GRAPH__URI=bolt://...` sets
`[graph] uri` of the file.
"""

from __future__ import annotations

import difflib
import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, Field, SecretStr, ValidationError, model_validator
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from lineagegraph.alerts_settings import AlertSettings
from lineagegraph.errors import ConfigError
from lineagegraph.graph.settings import GraphSettings
from lineagegraph.harvest.dbt.settings import DbtSettings
from lineagegraph.harvest.kafka_settings import KafkaSettings
from lineagegraph.harvest.openlineage_settings import OpenLineageSettings
from lineagegraph.harvest.s3.settings import S3Settings
from lineagegraph.harvest.snowflake.settings import SnowflakeSettings
from lineagegraph.identity import FoldRules
from lineagegraph.masking import MaskingSettings
from lineagegraph.settings_base import (
    CONFIG_ENV,
    ENV_PREFIX,
    TEST_ENV_PREFIX,
    Section,
    http_url,
    is_loopback,
    redact,
    secret_values,
)
from lineagegraph.spark.settings import SparkSettings
from lineagegraph.tags_settings import TagSettings

__all__ = [
    "CONFIG_ENV",
    "ENV_PREFIX",
    "TEST_ENV_PREFIX",
    "AlertSettings",
    "DbtSettings",
    "GraphSettings",
    "IdentitySettings",
    "KafkaSettings",
    "MaskingSettings",
    "OpenLineageSettings",
    "ReportSettings",
    "S3Settings",
    "Section",
    "ServeSettings",
    "Settings",
    "SnowflakeSettings",
    "SparkSettings",
    "TagSettings",
    "config_file",
    "http_url",
    "is_loopback",
    "load_settings",
    "redact",
    "secret_values",
    "source_settings",
    "with_overrides",
]

log = logging.getLogger("lineagegraph.settings")

DEFAULT_CONFIG = Path("config/lineagegraph.toml")
S = TypeVar("S", bound=Section)


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


class ReportSettings(Section):
    """The orphan and cost reports (`lineagegraph orphans`, `lineagegraph cost-report`)."""

    lookback_days: int = Field(
        90,
        ge=1,
        le=36_500,
        description="An object read or flowed from (itself or a dataset above it) within this "
        "many days before --as-of is consumed, not orphaned.",
    )
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
        16 * 2**20,
        ge=1024,
        le=2**30,
        description="Largest request body accepted, compressed and uncompressed alike.",
    )
    batch_events: int = Field(
        20_000,
        ge=1,
        le=1_000_000,
        description="Spooled events ingested into the graph in one batch at most.",
    )
    ingest_seconds: float = Field(
        0.5, gt=0, le=3600, description="How often spooled events are ingested into the graph."
    )
    metrics_ttl_seconds: float = Field(
        15.0,
        ge=0,
        le=86_400,
        description="How long /metrics reuses its scan of the graph (0: scan on every scrape); "
        "the event counters and latencies are always live.",
    )
    events_keep: int = Field(
        100_000,
        ge=0,
        le=100_000_000,
        description="Ingested RunEvents kept for GET /api/v1/events/lineage, the newest "
        "(0: none kept).",
    )
    events_keep_days: int = Field(
        30,
        ge=0,
        le=36_500,
        description="Days an ingested RunEvent is kept for GET /api/v1/events/lineage after it "
        "arrived (0: no age limit, only events_keep).",
    )

    def check(self) -> None:
        super().check()
        if not is_loopback(self.host) and self.token is None:
            raise ValueError(
                f"host {self.host!r} is not a loopback address: set a token "
                "(--token or LINEAGEGRAPH_SERVE__TOKEN) before serving beyond this machine"
            )


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
    kafka: KafkaSettings = Field(default_factory=KafkaSettings)
    reports: ReportSettings = Field(default_factory=ReportSettings)
    dbt: DbtSettings = Field(default_factory=DbtSettings)
    masking: MaskingSettings = Field(default_factory=MaskingSettings)
    sources: dict[str, dict[str, Any]] = Field(
        default_factory=dict,
        description="Settings of the sources that plug-in packages add, one [sources.NAME] "
        "table each (LINEAGEGRAPH_SOURCES__NAME__KEY), checked by the source's own "
        "settings_model when it has one.",
    )
    serve: ServeSettings = Field(default_factory=ServeSettings)
    tags: TagSettings = Field(default_factory=TagSettings)
    alerts: AlertSettings = Field(default_factory=AlertSettings)

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


def _describe(exc: ValidationError, path: Path | str | None, under: tuple[str, ...] = ()) -> str:
    """One line per bad key (of the table at `under`), naming both spellings a user may have
    used."""
    where = f" (from the environment or {path})" if path else " (from the environment)"
    lines = []
    for err in exc.errors():
        loc = (*under, *err["loc"])
        dotted = ".".join(str(p) for p in loc)
        env = ENV_PREFIX + "__".join(str(p) for p in loc).upper()
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
    _checked(updated, section, given)
    return settings.model_copy(update={section: updated}) if given else settings


def _checked(section: Section, name: str, given: Mapping[str, Any]) -> None:
    """`section.check()`, its ValueError a ConfigError naming the --option (of a value given on
    the command line) or the section and its environment variables."""
    try:
        section.check()
    except ValueError as exc:
        field = str(exc).split(" ", 1)[0]
        if field in given:  # about a value given on the command line: name its option
            raise ConfigError(f"--{field.replace('_', '-')}: {exc}") from None
        env = ENV_PREFIX + name.replace(".", "__").upper()
        raise ConfigError(f"invalid [{name}] settings ({env}__*): {exc}") from None


def source_settings(settings: Settings, name: str, model: type[S]) -> S:
    """A plug-in source's `[sources.NAME]` table validated by its own model (a `Section`), as
    built-in sections are: an unknown key or a bad value is a ConfigError naming
    `sources.NAME.KEY` and `LINEAGEGRAPH_SOURCES__NAME__KEY`, and the model's `check()` runs.
    `harvest NAME` and `harvest all` call it before a source with a `settings_model` runs."""
    try:
        found = model.model_validate(settings.sources.get(name, {}))
    except ValidationError as exc:
        raise ConfigError(_describe(exc, "the config file", ("sources", name))) from None
    _checked(found, f"sources.{name}", {})
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
