"""Structured logs for schedulers: one JSON object per line with the extra fields."""

from __future__ import annotations

import json
import logging

import pytest

from lineagegraph import logs


def test_json_lines_carry_extra_fields(capsys: pytest.CaptureFixture[str]) -> None:
    logs.configure(debug=False, fmt="json")
    logging.getLogger("lineagegraph.test").info("harvested", extra={"source": "s3", "objects": 3})
    logging.getLogger("lineagegraph.test").debug("hidden without --debug")
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1
    entry = json.loads(lines[0])
    assert entry["level"] == "info" and entry["message"] == "harvested"
    assert (entry["source"], entry["objects"], entry["logger"]) == ("s3", 3, "lineagegraph.test")


def test_text_lines_for_people(capsys: pytest.CaptureFixture[str]) -> None:
    logs.configure(debug=True, fmt="text")
    logging.getLogger("lineagegraph.test").debug("details")
    assert "DEBUG lineagegraph.test: details" in capsys.readouterr().err


def test_logging_set_up_by_a_test_ends_with_it(capfd: pytest.CaptureFixture[str]) -> None:
    """After the tests above configured logging on their captured stderr, a library logging at
    exit (py4j's "Closing down clientserver connection") must not hit a closed stream."""
    logging.getLogger("py4j.clientserver").info("Closing down clientserver connection")
    logging.getLogger("lineagegraph.test").warning("still reported")
    assert "Logging error" not in capfd.readouterr().err
