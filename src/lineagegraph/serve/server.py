"""Starts and stops the service: the store, the spool, the ingester, the Kafka consumer (with
[kafka] settings) and the HTTP server."""

from __future__ import annotations

import contextlib
import logging
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import uvicorn

from lineagegraph.errors import ConfigError
from lineagegraph.graph.store import open_store
from lineagegraph.harvest.openlineage import harvest_openlineage
from lineagegraph.serve.app import Service, create_app
from lineagegraph.serve.eventlog import FILE as EVENT_LOG
from lineagegraph.serve.eventlog import EventLog
from lineagegraph.serve.spool import GroupCommit, Ingester, Spool
from lineagegraph.settings import Settings

if TYPE_CHECKING:
    from lineagegraph.serve.kafka import KafkaFeed

log = logging.getLogger(__name__)
SPOOL_DIR = "serve-spool"


def spool_root(settings: Settings) -> Path:
    """Where accepted events wait for the graph: beside the embedded store's files."""
    return settings.graph.data_dir.expanduser() / SPOOL_DIR


class Stores:
    """The ingester's store and the readers' one, opened again together when the store's
    server has died (`kill -9`, a full disk that was freed): `reopen` starts a new one."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.writes = open_store(settings.graph)
        try:
            self.reads = open_store(settings.graph)
        except BaseException:
            self.writes.close()
            raise
        self.read_lock = threading.Lock()  # one store client, one request at a time

    def alive(self) -> bool:
        return self.writes.alive()

    def reopen(self) -> None:
        """Leave the dead server and open the store again (which starts a server); the old
        handles are let go first, so this process never holds two servers' files."""
        with contextlib.suppress(Exception):  # a dead server: leaving it may complain
            self.writes.close()
        self.writes = open_store(self.settings.graph)
        self.writes.ensure_schema()
        with self.read_lock:
            with contextlib.suppress(Exception):
                self.reads.close()
            self.reads = open_store(self.settings.graph)

    def close(self) -> None:
        try:
            self.reads.close()
        finally:
            self.writes.close()


@contextmanager
def running_service(settings: Settings) -> Iterator[Service]:
    """The service with its ingester running; on exit, what is spooled is ingested first.

    Two store handles: the ingester writes through one, requests read through the other, so a
    long ingest batch never holds up a lineage answer.
    """
    rules = settings.identity.rules()
    stores = Stores(settings)
    try:
        stores.writes.ensure_schema()
        spool = Spool(spool_root(settings))
        events = EventLog(
            spool.root / EVENT_LOG, settings.serve.events_keep, settings.serve.events_keep_days
        )

        def ingest(directory: Path) -> int:
            # Not exclusive, like the Spark listener: a CLI harvest on the same store must not
            # fail because a batch happens to be running (writes are idempotent MERGEs).
            # The RunEvents are listed by /api/v1/events/lineage once the batch is in the graph.
            with events.recording() as record:
                _, report = harvest_openlineage(
                    stores.writes,
                    directory,
                    rules,
                    full=True,
                    exclusive=False,
                    limits=settings.openlineage,
                    on_event=record,
                )
            for problem in report.problems[:5]:
                log.warning("spooled events: %s", problem)
            return report.events

        ingester = Ingester(
            spool,
            ingest,
            every_seconds=settings.serve.ingest_seconds,
            batch_events=settings.serve.batch_events,
            alive=stores.alive,
            revive=stores.reopen,
        )
        ingester.start()
        commit = GroupCommit(spool)
        feed = kafka_feed(settings, spool, ingester)
        service = Service(settings, stores, spool, ingester, commit, feed, events=events)
        service.alerts.start()
        try:
            if feed is not None:
                feed.start()
            yield service
        finally:
            service.alerts.stop()
            if feed is not None:  # its last batch spooled and committed, before the spool shuts
                feed.stop()
            commit.stop()
            ingester.stop()
            spool.close()
    finally:
        stores.close()


def kafka_feed(settings: Settings, spool: Spool, ingester: Ingester) -> KafkaFeed | None:
    """The consumer of the [kafka] topics when [kafka] bootstrap_servers is set, else None."""
    kafka = settings.kafka
    if not kafka.bootstrap_servers:
        return None
    if not kafka.subscription():
        raise ConfigError(
            "[kafka] bootstrap_servers is set but no topics or topic_pattern: serve has nothing "
            "to consume (set LINEAGEGRAPH_KAFKA__TOPICS, or unset bootstrap_servers)"
        )
    from lineagegraph.serve.kafka import KafkaFeed  # confluent-kafka only when configured

    return KafkaFeed(settings, spool, ingester)


def listen(host: str, port: int) -> socket.socket:
    """The listening socket, bound before the store is opened: a port in use is a clear error
    that changes nothing (uvicorn would report it only after start-up, as exit code 3)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise ConfigError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    return sock


def serve(settings: Settings) -> None:
    """Serve until stopped (SIGINT/SIGTERM: finish requests, ingest what is spooled, exit)."""
    sock = listen(settings.serve.host, settings.serve.port)
    with sock, running_service(settings) as service:
        config = uvicorn.Config(
            create_app(service),
            host=settings.serve.host,
            port=settings.serve.port,
            log_level="warning",
            access_log=False,
            server_header=False,
            proxy_headers=False,
        )
        uvicorn.Server(config).run(sockets=[sock])
