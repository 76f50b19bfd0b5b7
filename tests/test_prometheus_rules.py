"""The shipped Prometheus rules (config/prometheus/rules.yml) load, and fire exactly as their
unit tests say, in Prometheus's own rule engine (promtool); that they name only metrics `serve`
exposes is checked against a live scrape in tests/serve/test_serve_metrics.py."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

RULES = Path(__file__).parents[1] / "config" / "prometheus"
PROMTOOL = shutil.which("promtool")
needs_promtool = pytest.mark.skipif(
    PROMTOOL is None,
    reason="promtool is not installed (Debian: apt-get install prometheus; scripts/test.sh does)",
)


def promtool(*args: str) -> subprocess.CompletedProcess[str]:
    assert PROMTOOL
    return subprocess.run([PROMTOOL, *args], cwd=RULES, capture_output=True, text=True, timeout=120)


@needs_promtool
def test_the_rules_load() -> None:
    done = promtool("check", "rules", "rules.yml")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SUCCESS: 7 rules found" in done.stdout


@needs_promtool
def test_the_rules_fire_as_their_unit_tests_say() -> None:
    done = promtool("test", "rules", "rules.test.yml")
    assert done.returncode == 0, done.stdout + done.stderr


@needs_promtool
def test_a_wrong_expectation_fails(tmp_path: Path) -> None:
    """The unit tests can fail: the coverage rule's threshold moved makes them fail."""
    moved = (RULES / "rules.yml").read_text().replace("< 0.95", "< 0.85")
    assert moved != (RULES / "rules.yml").read_text()
    (tmp_path / "rules.yml").write_text(moved)
    (tmp_path / "rules.test.yml").write_text((RULES / "rules.test.yml").read_text())
    assert PROMTOOL
    done = subprocess.run(
        [PROMTOOL, "test", "rules", "rules.test.yml"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0
    assert "LineageCoverageLow" in done.stdout + done.stderr
