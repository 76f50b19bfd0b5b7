"""The demo's closing hints run as printed, from the shell that ran the demo.

After `.venv/bin/lineagegraph demo` without an activated virtualenv, a hint starting with a
bare `lineagegraph` fails with "command not found"; so the hints name the program the way the
shell can find it again. Checked by running the printed program for real.
"""

from __future__ import annotations

import os
import shlex
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from lineagegraph.cli.demo import invoked_as


@pytest.fixture
def venv_bin(tmp_path: Path) -> Path:
    """A bin/ directory with a `lineagegraph` console script, as pip writes it."""
    bin_dir = tmp_path / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    script = bin_dir / "lineagegraph"
    script.write_text(f"#!{sys.executable}\nfrom lineagegraph.cli import main\nmain()\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return bin_dir


def runs(command: str, cwd: Path, path: str) -> bool:
    env = {**os.environ, "PATH": path}
    argv = [*shlex.split(command), "--version"]
    result = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=60)
    return result.returncode == 0 and "lineagegraph" in result.stdout


def test_not_activated_names_the_path_it_was_started_by(
    venv_bin: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cwd = venv_bin.parents[1]
    monkeypatch.chdir(cwd)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    hint = invoked_as(".venv/bin/lineagegraph")
    assert hint == ".venv/bin/lineagegraph"
    assert runs(hint, cwd, "/usr/bin:/bin")


def test_activated_says_just_lineagegraph(venv_bin: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = f"{venv_bin}:/usr/bin:/bin"
    monkeypatch.setenv("PATH", path)
    hint = invoked_as(str(venv_bin / "lineagegraph"))  # what a PATH lookup hands Python
    assert hint == "lineagegraph"
    assert runs(hint, venv_bin, path)


def test_another_lineagegraph_on_path_is_not_taken_for_this_one(
    venv_bin: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "lineagegraph").write_text("#!/bin/sh\nexit 1\n")
    (other / "lineagegraph").chmod(0o755)
    monkeypatch.setenv("PATH", f"{other}:/usr/bin:/bin")
    started_by = str(venv_bin / "lineagegraph")
    assert invoked_as(started_by) == started_by


def test_a_module_run_is_repeated_as_a_module_run(tmp_path: Path) -> None:
    main_module = Path(sys.modules["lineagegraph.cli"].__file__ or "").parent / "__main__.py"
    hint = invoked_as(str(main_module))
    assert hint.endswith(" -m lineagegraph.cli")
    assert runs(hint, tmp_path, os.environ["PATH"])
