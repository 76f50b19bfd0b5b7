"""[kafka] settings and `harvest kafka`'s errors that need no broker."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from kafka_helpers import env
from pydantic import ValidationError
from services.tansu import free_port

from lineagegraph.cli import cli
from lineagegraph.graph.store import open_store
from lineagegraph.harvest.kafka_settings import KafkaSettings
from lineagegraph.settings import GraphSettings, load_settings, secret_values


def test_a_secret_librdkafka_property_must_be_given_as_a_secret() -> None:
    with pytest.raises(ValidationError, match=r"'sasl\.password' is a secret: set it in client_"):
        KafkaSettings(client_config={"sasl.password": "hunter2"})
    settings = KafkaSettings(
        bootstrap_servers="k:9093",
        topics=["ol"],
        client_config={"security.protocol": "SASL_SSL", "sasl.username": "lineage"},
        client_secrets={"sasl.password": "hunter2"},
    )
    assert "hunter2" not in repr(settings) and "hunter2" not in settings.model_dump_json()


def test_client_secrets_from_the_environment_are_masked_everywhere(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("LINEAGEGRAPH_KAFKA__CLIENT_SECRETS", '{"sasl.password": "s3cr3t-value"}')
    settings = load_settings()
    assert settings.kafka.client_secrets["sasl.password"].get_secret_value() == "s3cr3t-value"
    assert "s3cr3t-value" in secret_values(settings)  # what error messages are masked with


def test_a_topic_pattern_is_anchored_and_checked() -> None:
    assert KafkaSettings(topic_pattern="ol\\..*").subscription() == ["^(ol\\..*)$"]
    assert KafkaSettings(topics=["a"], topic_pattern="^b|c$").subscription() == ["a", "^(b|c)$"]
    with pytest.raises(ValidationError, match="not a regular expression"):
        KafkaSettings(topic_pattern="(")


def test_unreachable_brokers_fail_the_harvest_with_one_clear_line(tmp_path: Path) -> None:
    pytest.importorskip("confluent_kafka", reason="confluent-kafka is not installed")
    nobody = f"127.0.0.1:{free_port()}"  # nothing listens there
    data_dir = tmp_path / "graph"
    result = CliRunner().invoke(
        cli,
        ["--data-dir", str(data_dir), "harvest", "kafka"],
        env={**env(nobody, "ol", "g"), "LINEAGEGRAPH_KAFKA__JOIN_TIMEOUT_SECONDS": "2"},
    )
    assert result.exit_code == 5, result.output
    last = result.output.strip().splitlines()[-1]
    assert last.startswith(
        f"error: Kafka group 'g' got no partition of ol from {nobody} within 2 s; last error: "
    ), last
    with open_store(GraphSettings(data_dir=data_dir)) as store:
        [[status]] = store.execute("MATCH (r:HarvestRun) RETURN r.status", write=False).rows
    assert status == "failed"


def test_harvest_kafka_says_what_to_configure_and_records_no_run(tmp_path: Path) -> None:
    pytest.importorskip("confluent_kafka", reason="confluent-kafka is not installed")
    args = ["--data-dir", str(tmp_path / "g"), "harvest", "kafka"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2, result.output
    assert result.output == (
        "error: no [kafka] bootstrap_servers (LINEAGEGRAPH_KAFKA__BOOTSTRAP_SERVERS)\n"
    )
    result = CliRunner().invoke(cli, [*args, "--bootstrap-servers", "k:9092"])
    assert result.exit_code == 2, result.output
    assert "error: no [kafka] topics or topic_pattern" in result.output
    with open_store(GraphSettings(data_dir=tmp_path / "g")) as store:
        assert store.execute("MATCH (r:HarvestRun) RETURN r", write=False).rows == []
