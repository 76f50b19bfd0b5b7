"""The [alerts] section: which rules run over the graph, their windows and thresholds, and where
alerts are sent (lineagegraph.questions.alerts evaluates, lineagegraph.notify delivers)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, field_validator

from lineagegraph.settings_base import Section, http_url
from lineagegraph.values.globs import glob_regex

Severity = Literal["info", "warning", "critical"]
SEVERITIES: tuple[Severity, ...] = ("info", "warning", "critical")
RULES = (
    "freshness", "run_unfinished", "run_failed", "harvest_failing", "coverage", "quality",
    "schema_change", "upstream_drift",
)  # fmt: skip


class AlertSettings(Section):
    """`lineagegraph alerts` and `serve`'s evaluation: rules over the graph and receivers."""

    interval_seconds: float = Field(
        300.0,
        ge=0,
        le=86_400,
        description="How often `serve` evaluates the rules and notifies (0: never; "
        "`lineagegraph alerts` evaluates once when run).",
    )
    evaluator_nice: int = Field(
        10,
        ge=0,
        le=19,
        description="How much lower the CPU priority of `serve`'s evaluator process is (added "
        "to its niceness): lineage requests come first while it evaluates.",
    )
    freshness: dict[str, float] = Field(
        default_factory=dict,
        description="Freshness windows in hours by asset urn glob ('*' within a path segment, "
        "'**' across them), e.g. {'snowflake://acme/RAW.PUBLIC.*' = 26}: an asset not written "
        "within its window is late. The first glob that matches wins.",
    )
    learn_freshness: bool = Field(
        True,
        description="Give an asset no glob matches a window learned from its own writes: its "
        "usual interval between writes times freshness_tolerance.",
    )
    freshness_tolerance: float = Field(
        3.0, ge=1.0, le=1000.0, description="A learned window is the usual interval times this."
    )
    freshness_min_writes: int = Field(
        4,
        ge=2,
        description="Writes an asset needs before a window is learned from them.",
    )
    run_timeout_hours: float = Field(
        6.0,
        ge=0,
        le=10_000,
        description="An OpenLineage run that started (START or RUNNING) this many hours ago "
        "with no COMPLETE, FAIL or ABORT since never finished (0: no such rule).",
    )
    run_failed: bool = Field(
        True, description="Alert on every job whose latest ended run ended in FAIL or ABORT."
    )
    coverage: dict[str, float] = Field(
        default_factory=dict,
        description="Lowest share (0-1) of tables and datasets with lineage, by system glob, "
        "e.g. {'*' = 0.95}; a system under it fires a coverage alert. Empty: no coverage rule.",
    )
    harvest_failing: bool = Field(
        True, description="Alert when a source's harvests failed (or were partial) since its "
        "last successful one.",
    )  # fmt: skip
    quality: bool = Field(
        True, description="Alert on every asset with a check whose latest result fails or errs."
    )
    schema_change_hours: float = Field(
        24.0,
        ge=0,
        le=100_000,
        description="Alert on an asset that something reads whose schema (its columns and "
        "their types, as a source reports them) changed within this many hours; critical "
        "(breaking) when a dropped or retyped column feeds a column downstream or is read (0: "
        "no such rule).",
    )
    upstream_drift_hours: float = Field(
        24.0,
        ge=0,
        le=100_000,
        description="Alert on an asset whose set of upstream assets (the assets flowing into "
        "it) changed within this many hours: an upstream started or stopped flowing into it, "
        "by the lineage edges' history (0: no such rule).",
    )
    severity: dict[str, Severity] = Field(
        default_factory=dict,
        description="Severity per rule, over the defaults (freshness, run_unfinished, "
        "harvest_failing, coverage, schema_change and upstream_drift: warning; run_failed and "
        "quality: critical), e.g. {freshness = 'critical'}. A breaking schema change is "
        "critical.",
    )
    owners: dict[str, str] = Field(
        default_factory=dict,
        description="Who owns assets, by urn glob, e.g. {'snowflake://acme/MARTS.**' = "
        "'analytics@acme.example'}: named in an alert's blast radius.",
    )
    blast_names: int = Field(
        10, ge=0, le=1000, description="Downstream assets an alert names (it counts all)."
    )
    state_file: Path | None = Field(
        None,
        description="Where alert states and undelivered notifications are kept; unset: "
        "alerts/state.json under [graph] data_dir.",
    )
    alertmanager_urls: list[str] = Field(
        default_factory=list,
        description="Alertmanager base URLs (http://am:9093); firing alerts are pushed to "
        "POST /api/v2/alerts on every evaluation, a resolved one once with its endsAt.",
    )
    webhook_url: str | None = Field(
        None, description="A URL that receives each alert's firing and resolution as JSON."
    )
    webhook_secret: SecretStr | None = Field(
        None,
        description="Key of the webhook's X-Lineagegraph-Signature: sha256=HMAC-SHA256 of the "
        "body, hex (never printed).",
    )
    slack_webhook_url: SecretStr | None = Field(
        None, description="A Slack incoming-webhook URL (a secret: never printed)."
    )
    pagerduty_routing_key: SecretStr | None = Field(
        None,
        description="PagerDuty Events v2 integration key: alerts trigger and resolve incidents "
        "by their key (never printed).",
    )
    pagerduty_url: str = Field(
        "https://events.pagerduty.com/v2/enqueue", description="PagerDuty's Events v2 endpoint."
    )
    timeout_seconds: float = Field(10.0, gt=0, le=300, description="Per request to a receiver.")
    retries: int = Field(
        3, ge=0, le=10, description="Retries of a failed delivery within one evaluation."
    )
    backoff_seconds: float = Field(
        0.5,
        ge=0,
        le=60,
        description="Wait before the first retry, doubled before each next one; what still "
        "fails stays in the outbox and is sent at the next evaluation.",
    )
    outbox_max: int = Field(
        10_000, ge=1, description="Undelivered notifications kept per receiver (oldest dropped)."
    )

    @field_validator("freshness", "owners")
    @classmethod
    def _globs_compile(cls, value: dict[str, object]) -> dict[str, object]:
        for glob in value:
            glob_regex(glob)
        return value

    @field_validator("severity")
    @classmethod
    def _known_rules(cls, value: dict[str, Severity]) -> dict[str, Severity]:
        unknown = set(value) - set(RULES)
        if unknown:
            raise ValueError(f"unknown rule(s) {sorted(unknown)}; choose from {', '.join(RULES)}")
        return value

    @field_validator("alertmanager_urls")
    @classmethod
    def _urls(cls, value: list[str]) -> list[str]:
        return [str(http_url(url)) for url in value if url]

    @field_validator("webhook_url", "pagerduty_url")
    @classmethod
    def _url(cls, value: str | None) -> str | None:
        return http_url(value)

    def check(self) -> None:
        super().check()
        if self.webhook_secret is not None and not self.webhook_url:
            raise ValueError("webhook_secret is set but webhook_url is not")
        if self.slack_webhook_url is not None:
            http_url(self.slack_webhook_url.get_secret_value())
