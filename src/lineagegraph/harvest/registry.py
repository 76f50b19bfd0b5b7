"""Which sources exist: the built-in ones and those other packages register.

A package adds a source with no change to lineagegraph by declaring an entry point in the
group `lineagegraph.harvesters` that names a Harvester class (or instance), e.g. in its
pyproject.toml:

    [project.entry-points."lineagegraph.harvesters"]
    airflow = "lineagegraph_airflow:AirflowHarvester"
"""

from __future__ import annotations

import importlib
import logging
from importlib.metadata import entry_points

from lineagegraph.errors import ConfigError
from lineagegraph.harvest.base import Harvester

log = logging.getLogger("lineagegraph.harvest.registry")

GROUP = "lineagegraph.harvesters"

# In the order `harvest all` runs them.
BUILT_IN = {
    "s3": "lineagegraph.harvest.s3.harvester:S3Harvester",
    "snowflake": "lineagegraph.harvest.snowflake.harvester:SnowflakeHarvester",
    "spark": "lineagegraph.harvest.spark:SparkHarvester",
    "openlineage": "lineagegraph.harvest.openlineage:OpenLineageHarvester",
    "kafka": "lineagegraph.harvest.kafka:KafkaHarvester",
    "dbt": "lineagegraph.harvest.dbt:DbtHarvester",
}


def harvesters() -> dict[str, Harvester]:
    """Every source by name: the built-in ones first, then the plug-ins (a plug-in that fails
    to load, or takes a taken name, is logged and left out: one broken package must not stop
    the others)."""
    found = {name: _load(spec) for name, spec in BUILT_IN.items()}
    for point in entry_points(group=GROUP):
        try:
            harvester = _checked(point.load(), point.value)
        except Exception as exc:  # any error of someone else's package
            log.warning("harvester plug-in %r (%s) not loaded: %s", point.name, point.value, exc)
            continue
        if harvester.name in found:
            log.warning(
                "harvester plug-in %r (%s) not loaded: the name %r is taken",
                point.name,
                point.value,
                harvester.name,
            )
            continue
        found[harvester.name] = harvester
    return found


def harvester(name: str) -> Harvester:
    """The source called `name`; ConfigError naming the known ones otherwise."""
    known = harvesters()
    if name not in known:
        raise ConfigError(f"no source named {name!r}; known: {', '.join(known)}")
    return known[name]


def _load(spec: str) -> Harvester:
    module, _, attr = spec.partition(":")
    return _checked(getattr(importlib.import_module(module), attr), spec)


def _checked(obj: object, spec: str) -> Harvester:
    """A Harvester from what an entry point names: a class (made with no arguments) or one."""
    harvester = obj() if isinstance(obj, type) else obj
    if not isinstance(harvester, Harvester):
        raise TypeError(
            f"{spec} is not a Harvester (needs name, section, needs, not_configured and run)"
        )
    return harvester
