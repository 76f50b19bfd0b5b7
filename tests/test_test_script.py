"""`bash scripts/test.sh` installs into the tests' own virtualenv, never the user's `.venv`.

The README's first command installs lineagegraph into `.venv`; the test script used to
recreate that as an editable dev install, and a `lineagegraph` command run meanwhile failed
with an ImportError. Run here on a copy of the script, with a `python3` on PATH that only
records what it was asked to do, so nothing is installed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def sandbox(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A checkout with just the script and a user's `.venv`, and a recording `python3`."""
    (tmp_path / "scripts").mkdir()
    shutil.copy(ROOT / "scripts" / "test.sh", tmp_path / "scripts" / "test.sh")
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    (tmp_path / ".venv" / "bin" / "marker").write_text("the user's")
    stubs = tmp_path / "stubs"
    stubs.mkdir()
    python3 = stubs / "python3"
    python3.write_text('#!/bin/sh\necho "$@" >> "$CALLS"\nexit 97\n')
    python3.chmod(0o755)
    env = {**os.environ, "PATH": f"{stubs}:/usr/bin:/bin", "CALLS": str(tmp_path / "calls")}
    env.pop("LINEAGEGRAPH_TEST_VENV", None)
    return tmp_path, env


def calls(root: Path) -> list[str]:
    path = root / "calls"
    return path.read_text().splitlines() if path.exists() else []


def test_the_tests_get_their_own_virtualenv(sandbox: tuple[Path, dict[str, str]]) -> None:
    root, env = sandbox
    result = subprocess.run(
        ["bash", "scripts/test.sh"], cwd=root, env=env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 97  # the recording python3 stopped it at its first step
    assert calls(root) == ["-m venv .venv-test"]
    assert (root / ".venv" / "bin" / "marker").read_text() == "the user's"


def test_the_users_venv_is_refused(sandbox: tuple[Path, dict[str, str]]) -> None:
    root, env = sandbox
    env["LINEAGEGRAPH_TEST_VENV"] = ".venv"
    result = subprocess.run(
        ["bash", "scripts/test.sh"], cwd=root, env=env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 2 and "must not be .venv" in result.stderr
    assert calls(root) == []


def test_the_test_virtualenv_is_not_tracked() -> None:
    ignored = subprocess.run(
        ["git", "check-ignore", "-q", ".venv-test/bin/python"], cwd=ROOT, timeout=30
    )
    assert ignored.returncode == 0
