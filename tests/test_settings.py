"""Settings: environment over file over defaults, and errors that name the bad key."""

from __future__ import annotations

from pathlib import Path

import pytest

from lineagegraph.errors import ConfigError
from lineagegraph.settings import load_settings

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in list(__import__("os").environ):
        if name.startswith("LINEAGEGRAPH_"):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)  # no config/lineagegraph.toml here


def test_defaults_use_the_embedded_store() -> None:
    s = load_settings()
    assert s.graph.uri is None
    assert s.graph.data_dir == Path(".lineagegraph")
    assert s.graph.batch_size == 5000


def test_the_example_file_is_valid() -> None:
    s = load_settings(ROOT / "config" / "lineagegraph.example.toml")
    assert s.graph.batch_size == 5000


def test_environment_wins_over_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = tmp_path / "lg.toml"
    cfg.write_text('[graph]\nbatch_size = 10\nuser = "filed"\n')
    monkeypatch.setenv("LINEAGEGRAPH_GRAPH__BATCH_SIZE", "20")
    s = load_settings(cfg)
    assert (s.graph.batch_size, s.graph.user) == (20, "filed")


def test_config_from_environment_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = tmp_path / "lg.toml"
    cfg.write_text("[graph]\nbatch_size = 11\n")
    monkeypatch.setenv("LINEAGEGRAPH_CONFIG", str(cfg))
    assert load_settings().graph.batch_size == 11


def test_overrides_merge_into_sections(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LINEAGEGRAPH_GRAPH__BATCH_SIZE", "7")
    s = load_settings(graph={"uri": "bolt://db:7687"})
    assert (s.graph.uri, s.graph.batch_size) == ("bolt://db:7687", 7)


@pytest.mark.parametrize(
    ("toml", "env", "message"),
    [
        ("[graph]\nbogus = 1\n", {}, "graph.bogus / LINEAGEGRAPH_GRAPH__BOGUS: unknown setting"),
        ("", {"LINEAGEGRAPH_GRAPH__BATCH_SIZE": "0"}, "graph.batch_size"),
        ("", {"LINEAGEGRAPH_GRAPH__URI": "http://x"}, "must start with one of bolt://"),
        ("[graph\n", {}, "cannot read config file"),
    ],
)
def test_bad_settings_name_the_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, toml: str, env: dict[str, str], message: str
) -> None:
    cfg = tmp_path / "bad.toml"
    cfg.write_text(toml)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    with pytest.raises(ConfigError, match=message.replace(".", r"\.").replace("/", "/")):
        load_settings(cfg)


def test_missing_config_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"nope\.toml' does not exist"):
        load_settings(tmp_path / "nope.toml")


def test_password_is_never_shown(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LINEAGEGRAPH_GRAPH__PASSWORD", "hunter2-secret")
    s = load_settings()
    assert "hunter2-secret" not in repr(s) and "hunter2-secret" not in str(s.model_dump())
    assert s.graph.password is not None
    assert s.graph.password.get_secret_value() == "hunter2-secret"


def test_plugin_sources_keep_their_own_tables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    cfg = tmp_path / "lineagegraph.toml"
    cfg.write_text('[sources.csv]\nfile = "pairs.csv"\nlimit = 3\n')
    monkeypatch.setenv("LINEAGEGRAPH_SOURCES__AIRFLOW__URL", "http://airflow:8080")
    monkeypatch.setenv("LINEAGEGRAPH_SOURCE__TYPO", "x")
    with caplog.at_level("WARNING", logger="lineagegraph.settings"):
        s = load_settings(cfg)
    assert s.sources == {
        "csv": {"file": "pairs.csv", "limit": 3},
        "airflow": {"url": "http://airflow:8080"},
    }
    assert "SOURCES__AIRFLOW" not in caplog.text
    assert "ignoring unknown environment variable LINEAGEGRAPH_SOURCE__TYPO" in caplog.text


def test_the_listener_endpoint_must_be_an_http_url_and_its_token_a_secret(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("LINEAGEGRAPH_SPARK__OPENLINEAGE_URL", "lineage-host:5000")
    with pytest.raises(ConfigError, match=r"spark.openlineage_url .*must be an http:// or https"):
        load_settings()
    monkeypatch.setenv("LINEAGEGRAPH_SPARK__OPENLINEAGE_URL", "http://lineage-host:5000")
    monkeypatch.setenv("LINEAGEGRAPH_SPARK__OPENLINEAGE_TOKEN", "spark-t0ken-secret")
    s = load_settings()
    assert "spark-t0ken-secret" not in repr(s) and "spark-t0ken-secret" not in str(s.model_dump())
    assert s.spark.openlineage_url == "http://lineage-host:5000"


SECTION_MODULES = [
    "lineagegraph.settings",
    "lineagegraph.graph.settings",
    "lineagegraph.spark.settings",
    "lineagegraph.harvest.s3.settings",
    "lineagegraph.harvest.snowflake.settings",
    "lineagegraph.harvest.dbt.settings",
    "lineagegraph.harvest.openlineage_settings",
]


@pytest.mark.parametrize("first", SECTION_MODULES)
def test_each_section_module_imports_first_and_alone(first: str) -> None:
    """Sections sit beside their sources, whose packages' __init__ run when one is imported:
    imported first in a fresh interpreter, each loads (no import cycle) without the harvesters,
    the Spark listener, the graph store or the harvest loop (tests/test_layers.py sees only
    explicit imports, not what a package's __init__ brings)."""
    import subprocess
    import sys

    code = (
        f"import sys, {first}, lineagegraph.settings\n"
        "print(' '.join(sorted(m for m in sys.modules if m.startswith('lineagegraph'))))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    loaded = done.stdout.split()
    heavy = [
        m
        for m in loaded
        if m.endswith((".harvester", ".listener", ".http"))
        or m.startswith(("lineagegraph.graph.store", "lineagegraph.pipeline"))
    ]
    assert not heavy and set(SECTION_MODULES) <= set(loaded), loaded


def test_a_plugin_section_is_checked_like_a_built_in_one() -> None:
    """source_settings: defaults for a missing table, values coerced, and a bad value, an
    empty secret or a rule of the model's check() a ConfigError naming [sources.NAME]."""
    from pydantic import Field, SecretStr

    from lineagegraph.settings import Section, source_settings

    class Airflow(Section):
        url: str | None = Field(None, description="Where.")
        token: SecretStr | None = Field(None, description="Key.")
        retries: int = Field(3, ge=0, description="How often.")

        def check(self) -> None:
            super().check()
            if self.token and not self.url:
                raise ValueError("token is set but url is not")

    assert source_settings(load_settings(), "airflow", Airflow).retries == 3
    given = load_settings(None, sources={"airflow": {"url": "http://a", "retries": "5"}})
    assert source_settings(given, "airflow", Airflow).retries == 5
    cases = {
        "invalid setting sources.airflow.retries / LINEAGEGRAPH_SOURCES__AIRFLOW__RETRIES: "
        "Input should be greater than or equal to 0": {"retries": -1},
        "invalid [sources.airflow] settings (LINEAGEGRAPH_SOURCES__AIRFLOW__*): token is empty": {
            "url": "http://a",
            "token": " ",
        },
        "invalid [sources.airflow] settings (LINEAGEGRAPH_SOURCES__AIRFLOW__*): token is set "
        "but url is not": {"token": "k"},
    }
    for message, table in cases.items():
        with pytest.raises(ConfigError) as caught:
            source_settings(load_settings(None, sources={"airflow": table}), "airflow", Airflow)
        assert str(caught.value).startswith(message), str(caught.value)
