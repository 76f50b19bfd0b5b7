"""The house style is checked, not hoped for: `ruff check` and `ruff format --check` over the
whole tree (settings in pyproject.toml). `# fmt: skip` stays only on data tables that read
better aligned by hand; the formatter owns every other line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("command", [["check"], ["format", "--check"]], ids=["lint", "format"])
def test_ruff_finds_nothing(command: list[str]) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "ruff", *command, "."],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, (
        f"ruff {' '.join(command)} found something (fix it, or run "
        f"`ruff {' '.join(command).replace(' --check', '')} .`):\n{done.stdout}{done.stderr}"
    )
