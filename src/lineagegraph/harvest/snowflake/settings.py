"""[snowflake]: the Snowflake harvester's section (docs/settings.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, field_validator

from lineagegraph.settings_base import Section


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
    tags: bool = Field(
        True,
        description="Read ACCOUNT_USAGE.TAG_REFERENCES each harvest: tags on tables and "
        "columns become classifications (source snowflake).",
    )
    schemas: bool = Field(
        True,
        description="Read ACCOUNT_USAGE.COLUMNS each harvest: the columns and types of the "
        "tables in the graph as schema versions, a dropped column dated by its DELETED time, "
        "an added or retyped one by the harvest that sees it.",
    )
    tag_key: Literal["name", "qualified"] = Field(
        "name",
        description="Key of a Snowflake tag: 'name' (the tag's name in lower case, so PII "
        "matches dbt's and by-hand pii) or 'qualified' (DB.SCHEMA.NAME as stored).",
    )
    unmasking_policies: list[str] = Field(
        default_factory=list,
        description="Masking policies (DB.SCHEMA.NAME) that show the harvested queries' roles "
        "the plain value: a column read through one of them is a plain copy. A column read "
        "through any other masking policy in ACCESS_HISTORY's policies_referenced is masked, "
        "and classifications stop there.",
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
