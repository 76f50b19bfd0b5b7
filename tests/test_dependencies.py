"""The dependency lists: users get the current Snowflake connector, the tests the one they need.

fakesnow (the Snowflake stand-in of the tests and the demo) imports and serves only 4.x
clients, but the harvester's calls work on 5.x too; so the core admits both majors and only the
extras that bring fakesnow pin 4.x.
"""

from __future__ import annotations

import tomllib
from importlib.metadata import version
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
CONNECTOR = "snowflake-connector-python"


def connector_spec(requirements: list[str]) -> Requirement:
    (found,) = [r for r in map(Requirement, requirements) if r.name == CONNECTOR]
    return found


def test_core_admits_the_current_connector_major() -> None:
    spec = connector_spec(PROJECT["dependencies"]).specifier
    assert spec.contains("4.8.1") and spec.contains("5.2.0"), spec


def test_extras_with_fakesnow_pin_the_connector_it_works_with() -> None:
    extras = PROJECT["optional-dependencies"]
    assert any(Requirement(r).name == "fakesnow" for r in extras["demo"])
    assert "lineagegraph[demo]" in extras["dev"]  # dev inherits the pin
    spec = connector_spec(extras["demo"]).specifier
    assert spec.contains("4.8.1") and not spec.contains("5.0.0"), spec


def test_the_tests_run_against_the_pinned_connector() -> None:
    installed = version(CONNECTOR)
    assert connector_spec(PROJECT["optional-dependencies"]["demo"]).specifier.contains(installed)
