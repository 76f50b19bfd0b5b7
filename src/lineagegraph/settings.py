"""Settings from `LINEAGEGRAPH_*` environment variables and a TOML file, validated at start-up.

Precedence: explicit overrides (CLI flags) > environment > TOML file > defaults.
Nested keys use `__` in environment variables: `LINEAGEGRAPH_GRAPH__URI=bolt://...` sets
`[graph] uri` of the file.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from lineagegraph.errors import ConfigError

ENV_PREFIX = "LINEAGEGRAPH_"
CONFIG_ENV = "LINEAGEGRAPH_CONFIG"
DEFAULT_CONFIG = Path("config/lineagegraph.toml")


class Section(BaseModel):
    """A settings section: unknown keys are typos and fail loudly."""

    model_config = ConfigDict(extra="forbid")


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

    @field_validator("uri")
    @classmethod
    def _known_scheme(cls, uri: str | None) -> str | None:
        if uri in (None, ""):
            return None
        schemes = ("bolt://", "bolt+s://", "bolt+ssc://", "neo4j://", "neo4j+s://", "neo4j+ssc://")
        if not uri.startswith(schemes):
            raise ValueError(f"must start with one of {', '.join(schemes)} (got {uri!r})")
        return uri


class IdentitySettings(Section):
    snowflake_account: str | None = Field(
        None, description="Snowflake account in org-account form, used in every Snowflake urn."
    )
    fold_patterns: list[str] = Field(
        default_factory=list,
        description=r"Extra dataset folding regexes over whole segments, e.g. '\d{4}/\d{2}/\d{2}'.",
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

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        sources: tuple[PydanticBaseSettingsSource, ...] = (init_settings, env_settings)
        if _config_path is not None:
            sources += (TomlConfigSettingsSource(settings_cls, toml_file=_config_path),)
        return sources


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
