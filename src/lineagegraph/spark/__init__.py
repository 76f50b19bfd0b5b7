"""Lineage from Spark jobs: one call installs a query-plan listener in a running session.

    from lineagegraph import spark as lineage
    lineage.install(spark)          # settings from LINEAGEGRAPH_* / the TOML file / --conf

Settings may also come from the job's Spark conf (`spark-submit --conf
spark.lineagegraph.emit=openlineage`), see SPARK_CONF. Explicit arguments win over the conf,
the conf over the environment and the TOML file.
"""

from __future__ import annotations

import atexit
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lineagegraph.errors import ConfigError
from lineagegraph.settings_base import redact
from lineagegraph.spark.actions import AppInfo, Naming
from lineagegraph.spark.spool_files import check_writable
from lineagegraph.spark.threads import Counts

# The listener (and the graph it writes to) and the settings loader load when the agent is
# installed: lineagegraph.settings imports lineagegraph.spark.settings, which runs this file.
if TYPE_CHECKING:
    from lineagegraph.settings import Settings
    from lineagegraph.spark.listener import Worker

__all__ = ["SPARK_CONF", "SPARK_CONF_PREFIXES", "SparkLineage", "install"]

log = logging.getLogger("lineagegraph.spark")
# spark conf key -> (settings section, key)
SPARK_CONF = {
    "spark.lineagegraph.emit": ("spark", "emit"),
    "spark.lineagegraph.spoolDir": ("spark", "spool_dir"),
    "spark.lineagegraph.openlineageDir": ("spark", "openlineage_dir"),
    "spark.lineagegraph.openlineageNamespace": ("spark", "openlineage_namespace"),
    "spark.lineagegraph.openlineageUrl": ("spark", "openlineage_url"),
    "spark.lineagegraph.openlineageEndpoint": ("spark", "openlineage_endpoint"),
    "spark.lineagegraph.openlineageToken": ("spark", "openlineage_token"),
    "spark.lineagegraph.appName": ("spark", "app_name"),
    "spark.lineagegraph.queueSize": ("spark", "queue_size"),
    "spark.lineagegraph.kafkaBootstrapServers": ("spark", "kafka_bootstrap_servers"),
    "spark.lineagegraph.kafkaTopic": ("spark", "kafka_topic"),
    "spark.lineagegraph.graphUri": ("graph", "uri"),
    "spark.lineagegraph.dataDir": ("graph", "data_dir"),
}
# spark conf prefix -> (settings section, key): each key under it is one entry of that dict,
# `spark.lineagegraph.kafkaProperties.sasl.username` -> [spark] kafka_properties["sasl.username"]
SPARK_CONF_PREFIXES = {
    "spark.lineagegraph.kafkaProperties.": ("spark", "kafka_properties"),
}
_ATTRIBUTE = "_lineagegraph"


class SparkLineage:
    """The installed listener of one session: flush it in tests, stop it to unregister."""

    def __init__(self, spark: Any, settings: Settings, worker: Worker, listener: Any) -> None:
        self.spark = spark
        self.settings = settings
        self.worker = worker
        self.listener = listener
        self.stopped = False

    @property
    def counts(self) -> dict[str, int]:
        """What the listener did so far: actions recorded, ignored, failed, spooled, dropped;
        with an OpenLineage URL, events sent, retried, rejected and kept unsent."""
        return dict(self.worker.counts.snapshot())

    def flush(self, timeout: float = 30.0) -> bool:
        """Wait for Spark's listener bus, the worker, then the HTTP sender (events sent or
        kept locally); False if `timeout` ran out."""
        try:
            self.spark.sparkContext._jsc.sc().listenerBus().waitUntilEmpty(int(timeout * 1000))
        except Exception:  # a stopped context has nothing left to deliver
            log.debug("listener bus not drained", exc_info=True)
        return self.worker.flush(timeout)

    def stop(self, timeout: float = 30.0) -> None:
        """Deliver what is pending, unregister, and close the graph run (idempotent)."""
        if self.stopped:
            return
        self.stopped = True
        self.flush(timeout)
        self.listener.stopped = True
        from lineagegraph.spark.listener import registered_proxy

        try:
            manager = self.spark._jsparkSession.listenerManager()
            proxy = registered_proxy(manager, self.listener)
            if proxy is not None:
                manager.unregister(proxy)
        except Exception:
            log.debug("could not unregister the lineage listener", exc_info=True)
        self.worker.stop(timeout)
        atexit.unregister(self.stop)
        if getattr(self.spark, _ATTRIBUTE, None) is self:
            delattr(self.spark, _ATTRIBUTE)


def install(
    spark: Any,
    *,
    settings: Settings | None = None,
    emit: str | None = None,
    spool_dir: str | Path | None = None,
    openlineage_dir: str | Path | None = None,
    app_name: str | None = None,
) -> SparkLineage:
    """Register the lineage listener on `spark` (a classic, non-Connect SparkSession).

    Returns the installed listener; installing twice on one session returns the first. A
    spool or OpenLineage directory that is not writable fails here, before the job runs.
    """
    existing = getattr(spark, _ATTRIBUTE, None)
    if isinstance(existing, SparkLineage) and not existing.stopped:
        return existing
    jsession = getattr(spark, "_jsparkSession", None)
    if jsession is None:
        raise ConfigError(
            "lineagegraph.spark.install needs a classic SparkSession; Spark Connect sessions "
            "have no JVM in this process (use the OpenLineage Spark agent on the server)"
        )
    if settings is None:
        settings = _settings_from(spark, emit, spool_dir, openlineage_dir, app_name)
    _check(settings)
    from pyspark.java_gateway import ensure_callback_server_started

    from lineagegraph.spark.listener import QueryListener, Worker, make_sinks

    context = spark.sparkContext
    app = AppInfo(
        name=settings.spark.app_name or context.appName,
        app_id=context.applicationId,
        user=context.sparkUser(),
        spark_version=spark.version,
    )
    naming = Naming(
        settings.identity.rules(), settings.identity.snowflake_account, settings.masking.names
    )
    counts = Counts()
    worker = Worker(
        app, naming, make_sinks(settings, app, counts), settings.spark.queue_size, counts
    )
    listener = QueryListener(worker)
    ensure_callback_server_started(context._gateway)
    jsession.listenerManager().register(listener)
    handle = SparkLineage(spark, settings, worker, listener)
    setattr(spark, _ATTRIBUTE, handle)
    atexit.register(handle.stop)
    log.info(
        "lineage listener installed for %s (emit=%s%s)",
        app.name,
        settings.spark.emit,
        _destination(settings),
    )
    return handle


def _destination(settings: Settings) -> str:
    """Where events go, for the log (no secret: URLs redacted, Kafka properties left out)."""
    spark = settings.spark
    if spark.emit == "kafka":
        return f", to Kafka topic {spark.kafka_topic!r} at {spark.kafka_bootstrap_servers}"
    if spark.emit in ("openlineage", "both") and spark.openlineage_url:
        return f", to {redact(spark.openlineage_url)}"
    return ""


def _settings_from(
    spark: Any,
    emit: str | None,
    spool_dir: str | Path | None,
    openlineage_dir: str | Path | None,
    app_name: str | None,
) -> Settings:
    overrides: dict[str, dict[str, Any]] = {}
    for key, (section, name) in SPARK_CONF.items():
        value = spark.conf.get(key, None)
        if value is not None:
            overrides.setdefault(section, {})[name] = value
    conf = spark.conf.getAll  # a property since Spark 4.0
    for prefix, (section, name) in SPARK_CONF_PREFIXES.items():
        given = {k.removeprefix(prefix): v for k, v in conf.items() if k.startswith(prefix)}
        if given:
            overrides.setdefault(section, {})[name] = given
    explicit = {
        "emit": emit,
        "spool_dir": spool_dir,
        "openlineage_dir": openlineage_dir,
        "app_name": app_name,
    }
    for name, value in explicit.items():
        if value is not None:
            overrides.setdefault("spark", {})[name] = value
    from lineagegraph.settings import load_settings

    return load_settings(None, **overrides)


def _check(settings: Settings) -> None:
    """Directories that cannot be written fail here, before the job runs; a URL that would go
    unused is said, not silently ignored."""
    from lineagegraph.settings import with_overrides

    with_overrides(settings, "spark")  # its rules across fields: no empty openlineage_token
    if settings.spark.emit in ("graph", "both"):
        check_writable(settings.spark.spool_dir, "Spark lineage spool directory")
    if settings.spark.emit == "kafka" and not settings.spark.kafka_bootstrap_servers:
        raise ConfigError(
            "[spark] emit is 'kafka' but kafka_bootstrap_servers is not set (Spark conf "
            "spark.lineagegraph.kafkaBootstrapServers)"
        )
    if settings.spark.emit in ("openlineage", "both", "kafka"):  # kafka: what is not sent
        check_writable(settings.spark.openlineage_dir, "OpenLineage output directory")
    if settings.spark.openlineage_url and settings.spark.emit not in ("openlineage", "both"):
        log.warning(
            "[spark] openlineage_url is set but emit is %r: no event is posted there "
            "(set emit to 'openlineage' or 'both')",
            settings.spark.emit,
        )
