"""An empty secret is an error wherever one is read (issue 21, item 1): an empty serve token
would let 'Authorization: Bearer' with nothing after it in, on a non-loopback bind too."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from serve_fixtures import SRC

from lineagegraph.errors import ConfigError
from lineagegraph.settings import load_settings, with_overrides


@pytest.mark.parametrize("how", ["environment", "option", "toml"], ids=["env", "--token", "toml"])
def test_an_empty_token_is_refused_before_anything_opens(tmp_path: Path, how: str) -> None:
    store = tmp_path / "store"
    args = ["serve", "--host", "0.0.0.0", "--port", "0"]
    env = {"LINEAGEGRAPH_SERVE__TOKEN": ""} if how == "environment" else {}
    if how == "option":
        args += ["--token", ""]
    elif how == "toml":
        config = tmp_path / "lineagegraph.toml"
        config.write_text('[serve]\ntoken = ""\n')
        args = ["--config", str(config), *args]
    code, output = run_cli(store, args, env)
    assert code == 2, output
    assert "token" in output and "is empty" in output
    assert "token not set" not in output  # it never started
    assert not store.exists()


def test_a_blank_token_is_as_empty_as_none(tmp_path: Path) -> None:
    code, output = run_cli(tmp_path / "store", ["serve", "--host", "0.0.0.0", "--token", "  "])
    assert code == 2
    assert "--token" in output and "is empty" in output


def run_cli(store: Path, args: list[str], env: dict[str, str] | None = None) -> tuple[int, str]:
    """The real CLI in a process of its own, bounded: a serve that started would run on."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("LINEAGEGRAPH_")}
    environ |= {"PYTHONPATH": str(SRC), "LINEAGEGRAPH_GRAPH__DATA_DIR": str(store), **(env or {})}
    try:
        command = [sys.executable, "-m", "lineagegraph.cli", *args]
        done = subprocess.run(
            command, env=environ, capture_output=True, text=True, timeout=60, cwd=store.parent
        )
    except subprocess.TimeoutExpired as exc:
        raise AssertionError(f"serve started: {exc.stderr!r}") from None
    return done.returncode, done.stderr


@pytest.mark.parametrize(
    "variable",
    [
        "LINEAGEGRAPH_SPARK__OPENLINEAGE_TOKEN",
        "LINEAGEGRAPH_S3__SECRET_ACCESS_KEY",
        "LINEAGEGRAPH_SNOWFLAKE__PASSWORD",
        "LINEAGEGRAPH_SERVE__TOKEN",
    ],
)
def test_every_empty_secret_is_a_config_error_where_its_section_is_used(
    monkeypatch: pytest.MonkeyPatch, variable: str
) -> None:
    """Checked when a command uses the section (a half-configured source stops only the
    commands that read it); [graph], which every command reads, as it is loaded."""
    monkeypatch.setenv(variable, "")
    section, key = variable.removeprefix("LINEAGEGRAPH_").lower().split("__")
    settings = load_settings()
    with pytest.raises(ConfigError, match=rf"invalid \[{section}\] settings .*: {key} is empty"):
        with_overrides(settings, section)


def test_an_empty_graph_password_is_refused_as_settings_load(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("LINEAGEGRAPH_GRAPH__PASSWORD", "")
    pattern = r"graph.password / LINEAGEGRAPH_GRAPH__PASSWORD: .*password is empty"
    with pytest.raises(ConfigError, match=pattern):
        load_settings()


def test_a_real_token_still_serves_beyond_loopback(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LINEAGEGRAPH_SERVE__TOKEN", "s3cret")
    assert load_settings().serve.token is not None
