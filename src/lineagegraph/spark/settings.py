"""[spark]: read by the Spark agent (lineagegraph.spark) and by `harvest spark` (its spool)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, field_validator

from lineagegraph.settings_base import Section, http_url


class SparkSettings(Section):
    """The Spark listener (lineagegraph.spark.install) and `harvest spark --spool`."""

    emit: Literal["graph", "openlineage", "both", "kafka"] = Field(
        "graph",
        description="Where the listener sends lineage: the graph, OpenLineage JSON lines, or "
        "both; kafka: OpenLineage RunEvents to the Kafka topic kafka_topic.",
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
        1000,
        ge=1,
        le=1_000_000,
        description="Actions waiting for the worker thread; when full, new ones are dropped and "
        "counted so the job never waits.",
    )
    app_name: str | None = Field(
        None,
        description="Name used in transformation urns instead of spark.app.name (give a stable "
        "one when app names carry dates or ids).",
    )
    retry_seconds: float = Field(
        30.0,
        gt=0,
        description="How long the listener spools before it tries the graph (or the "
        "OpenLineage endpoint) again.",
    )
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
        60.0,
        gt=0,
        le=3600,
        description="How long the listener retries an event the endpoint (or the Kafka "
        "brokers) does not take (connection errors, 5xx) before it keeps it in openlineage_dir.",
    )

    kafka_bootstrap_servers: str | None = Field(
        None,
        description="Kafka brokers (host:port, comma-separated) that emit=kafka sends "
        "OpenLineage RunEvents to.",
    )
    kafka_topic: str = Field(
        "openlineage", min_length=1, description="The Kafka topic emit=kafka writes to."
    )
    kafka_properties: dict[str, SecretStr] = Field(
        default_factory=dict,
        description="librdkafka producer settings passed through as given (security.protocol, "
        "sasl.mechanism, sasl.username, sasl.password, ssl.ca.location, ...); values are "
        "never printed.",
    )

    @field_validator("openlineage_url")
    @classmethod
    def _http_url(cls, url: str | None) -> str | None:
        return http_url(url)
