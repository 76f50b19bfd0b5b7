"""`harvest kafka`: OpenLineage events from Kafka topics, until caught up."""

from __future__ import annotations

import click

from lineagegraph.cli.app import App
from lineagegraph.cli.common import pass_app
from lineagegraph.cli.harvesting import harvest, harvest_with
from lineagegraph.settings import with_overrides


@harvest.command("kafka")
@click.option(
    "--bootstrap-servers",
    metavar="HOST:PORT[,...]",
    help="The brokers to start from (default: [kafka] bootstrap_servers).",
)
@click.option(
    "--topic",
    "topics",
    multiple=True,
    help="A topic of OpenLineage events (repeatable; default: [kafka] topics).",
)
@click.option("--group-id", help="The consumer group (default: [kafka] group_id).")
@pass_app
def kafka_command(
    app: App, bootstrap_servers: str | None, topics: tuple[str, ...], group_id: str | None
) -> None:
    """Ingest the OpenLineage events on Kafka topics, from where the group left off until
    every partition is read, then exit (for cron).

    Every event type is taken, as from files (COMPLETE events are lineage; START, RUNNING,
    FAIL and ABORT are counted, their quality assertions kept). A message's offset is
    committed only once its event is in the graph, so a harvest killed at any moment loses
    nothing, and the next one writes what it reads again without changing the graph. A
    message that is no event goes to the dead letter ([kafka] dead_letter_topic, else a
    JSON-lines file) and the partition moves on. The summary gives the messages consumed,
    committed and dead-lettered, and the group's lag per partition. Security (SASL, TLS):
    [kafka] client_config and client_secrets (see docs/kafka.md).

    \b
    Examples:
      lineagegraph harvest kafka --bootstrap-servers kafka:9092 --topic openlineage
      lineagegraph --config /etc/lineagegraph.toml harvest kafka     # [kafka] settings
    """
    settings = with_overrides(
        app.settings,
        "kafka",
        bootstrap_servers=bootstrap_servers,
        topics=list(topics) or None,
        group_id=group_id,
    )
    from lineagegraph.harvest.kafka import KafkaHarvester  # confluent-kafka: only when used

    harvest_with(app, KafkaHarvester(), settings)
