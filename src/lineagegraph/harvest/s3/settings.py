"""[s3]: the S3 harvester's section (docs/settings.md)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, SecretStr, field_validator

from lineagegraph.settings_base import Section, http_url


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
    access_logs: list[str] = Field(
        default_factory=list,
        description="Where `harvest s3-access` reads S3 server access logs or CloudTrail "
        "data-event files: s3://bucket/prefix or local directories.",
    )
    access_overlap_hours: float = Field(
        24.0,
        ge=0,
        le=24 * 366,
        description="`harvest s3-access` reads again the log files delivered this long before "
        "its last run's newest one (listings and deliveries lag); files already counted are "
        "skipped, so no read counts twice.",
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
