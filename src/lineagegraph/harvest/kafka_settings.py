"""[kafka]: `harvest kafka` (and `serve`'s consumer): OpenLineage events from Kafka topics."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, field_validator

from lineagegraph.settings_base import Section

# librdkafka properties whose values are secrets: they go in `client_secrets`, never printed.
SECRET_WORDS = ("password", "secret", "token", "key.pem", "jaas")


class KafkaSettings(Section):
    """`harvest kafka`: which topics hold OpenLineage events and how to reach them."""

    bootstrap_servers: str | None = Field(
        None,
        description="The Kafka brokers to start from, `host:port[,host:port...]` "
        "(librdkafka's bootstrap.servers).",
    )
    topics: list[str] = Field(
        default_factory=list,
        description="Topics of OpenLineage events (one event per message, JSON, as "
        "openlineage-python's and the Java client's Kafka transports write them).",
    )
    topic_pattern: str | None = Field(
        None,
        description="A regular expression: every topic whose whole name matches is read, "
        "those created later too (instead of, or beside, `topics`).",
    )
    group_id: str = Field(
        "lineagegraph",
        min_length=1,
        description="The consumer group: its committed offsets are where the next harvest "
        "resumes; consumers of one group share the partitions.",
    )
    auto_offset_reset: Literal["earliest", "latest"] = Field(
        "earliest",
        description="Where a group with no committed offset starts: at the oldest message "
        "kept ('earliest') or at new messages only ('latest').",
    )
    client_config: dict[str, str | int | float | bool] = Field(
        default_factory=dict,
        description="Other librdkafka properties, passed through as they are, e.g. "
        '{"security.protocol" = "SASL_SSL", "sasl.mechanism" = "SCRAM-SHA-512", '
        '"sasl.username" = "lineage", "ssl.ca.location" = "/etc/ssl/kafka-ca.pem"}. '
        "Secret ones belong in client_secrets.",
    )
    client_secrets: dict[str, SecretStr] = Field(
        default_factory=dict,
        description="librdkafka properties whose values are secrets, e.g. "
        '{"sasl.password" = "..."} or {"ssl.key.password" = "..."} (never printed).',
    )
    dead_letter_topic: str | None = Field(
        None,
        description="Where a message that is no OpenLineage event goes (its key and value "
        "as they were; headers say its topic, partition, offset and the reason). Unset: the "
        "dead_letter_file.",
    )
    dead_letter_file: Path | None = Field(
        None,
        description="A JSON-lines file for the bad messages when no dead_letter_topic is set "
        "(topic, partition, offset, reason, key, value). Default: kafka-dead-letter.jsonl "
        "in the graph's data_dir.",
    )
    batch_events: int = Field(
        20_000,
        ge=1,
        le=1_000_000,
        description="The most messages written to the graph at once; their offsets are "
        "committed when they are in it. More is faster and holds more in memory.",
    )
    batch_seconds: float = Field(
        2.0,
        gt=0,
        description="The longest a batch is read before it is written (when fewer than "
        "batch_events messages come): how long an event may wait for the graph.",
    )
    idle_seconds: float = Field(
        1.0,
        gt=0,
        description="`harvest kafka` ends when every partition it reads is at its end and no "
        "message came for this long.",
    )
    join_timeout_seconds: float = Field(
        60.0,
        gt=0,
        description="How long `harvest kafka` waits for the group to give it partitions "
        "before it gives up (the brokers unreachable, no such topic).",
    )

    @field_validator("topic_pattern")
    @classmethod
    def _regex(cls, value: str | None) -> str | None:
        if value:
            try:
                re.compile(value)
            except re.error as exc:
                raise ValueError(f"not a regular expression: {exc}") from None
        return value or None

    @field_validator("client_config")
    @classmethod
    def _no_secrets(
        cls, value: dict[str, str | int | float | bool]
    ) -> dict[str, str | int | float | bool]:
        for name in value:
            if any(word in name.lower() for word in SECRET_WORDS):
                raise ValueError(f"{name!r} is a secret: set it in client_secrets")
        return value

    def check(self) -> None:
        super().check()
        for name, secret in self.client_secrets.items():
            if not secret.get_secret_value().strip():
                raise ValueError(f"client_secrets {name!r} is empty; give a real value")

    def subscription(self) -> list[str]:
        """What to subscribe to: the topics, and the pattern as librdkafka reads one (a name
        starting with `^`), anchored at both ends."""
        found = list(self.topics)
        if self.topic_pattern:
            found.append("^(" + self.topic_pattern.removeprefix("^").removesuffix("$") + ")$")
        return found
