"""The source registry: `harvest list`, plug-in sources from another installed package (the
example of docs/writing-a-harvester.md, installed with pip), OpenLineage in `harvest all`, and
the Python API running a source with options."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import ClassVar

import pytest
from botocore.client import BaseClient
from click.testing import CliRunner
from s3_fixtures import put_many, s3_settings

import lineagegraph
from lineagegraph.cli import cli
from lineagegraph.errors import ConfigError
from lineagegraph.harvest.s3 import S3Harvester
from lineagegraph.settings import Section

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(__file__).parent / "data" / "openlineage"
EVENT = {
    "eventType": "COMPLETE", "eventTime": "2024-06-01T02:00:00Z",
    "producer": "https://example.com/etl", "run": {"runId": "r-1"},
    "job": {"namespace": "etl", "name": "daily"},
    "inputs": [{"namespace": "s3://lake", "name": "raw/orders"}],
    "outputs": [{"namespace": "s3://lake", "name": "curated/orders"}],
}  # fmt: skip


def readme_block(language: str) -> str:
    """The first `language` block of docs/writing-a-harvester.md (the page the README links)."""
    text = (ROOT / "docs" / "writing-a-harvester.md").read_text(encoding="utf-8")
    found = re.search(rf"^```{language}\n(.*?)^```", text, re.MULTILINE | re.DOTALL)
    assert found, f"no {language} block in docs/writing-a-harvester.md"
    return found.group(1)


@pytest.fixture(scope="module")
def plugin_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example plug-in of docs/writing-a-harvester.md, installed by pip on its own."""
    work = tmp_path_factory.mktemp("plugin")
    package = work / "lineagegraph-csv"
    package.mkdir()
    (package / "lineagegraph_csv.py").write_text(readme_block("python"), encoding="utf-8")
    (package / "pyproject.toml").write_text(
        readme_block("toml") + '\n[build-system]\nrequires = ["setuptools>=61"]\n'
        'build-backend = "setuptools.build_meta"\n\n[tool.setuptools]\n'
        'py-modules = ["lineagegraph_csv"]\n',
        encoding="utf-8",
    )
    site = work / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-index",
            "--no-build-isolation",
            "--target",
            str(site),
            f"./{package.name}",
        ],
        cwd=work,
        check=True,
        capture_output=True,
        timeout=300,
    )
    return site


def lineagegraph_cli(
    site: Path, store: Path, *args: str, **env: str
) -> subprocess.CompletedProcess[str]:
    """The installed command in a new process that sees the plug-in's site directory."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("LINEAGEGRAPH_")}
    environ["PYTHONPATH"] = os.pathsep.join([str(site), str(ROOT / "src")])
    return subprocess.run(
        [sys.executable, "-m", "lineagegraph.cli", "--data-dir", str(store), *args],
        env={**environ, **env},
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_an_installed_plugin_is_a_source(plugin_site: Path, tmp_path: Path) -> None:
    store = tmp_path / "store"
    listed = lineagegraph_cli(plugin_site, store, "harvest", "list")
    assert listed.returncode == 0, listed.stderr
    row = next(line for line in listed.stdout.splitlines() if line.startswith("csv "))
    assert "no (no [sources.csv] file)" in row and "[sources.csv] file (a CSV" in row
    assert not store.exists()  # listing touches no store

    pairs = tmp_path / "copies.csv"
    pairs.write_text(
        "s3://lake/raw/orders,s3://lake/curated/orders\n"
        "s3://lake/curated/orders,s3://lake/marts/daily\n"
    )
    env = {"LINEAGEGRAPH_SOURCES__CSV__FILE": str(pairs)}
    listed = lineagegraph_cli(plugin_site, store, "harvest", "list", **env)
    assert re.search(r"^csv +yes ", listed.stdout, re.MULTILINE), listed.stdout

    ran = lineagegraph_cli(plugin_site, store, "harvest", "csv", **env)
    assert ran.returncode == 0, ran.stderr
    assert re.fullmatch(rf"{pairs}: 2 pairs; run \w+: success\n", ran.stdout)
    upstream = lineagegraph_cli(
        plugin_site, store, "upstream", "s3://lake/marts/daily", "--format", "json"
    )
    assert upstream.returncode == 0, upstream.stderr
    found = {a["urn"]: a["distance"] for a in json.loads(upstream.stdout)["assets"]}
    assert found == {"s3://lake/curated/orders": 1, "s3://lake/raw/orders": 2}

    every = lineagegraph_cli(plugin_site, store, "harvest", "all", "--only", "csv", **env)
    assert every.returncode == 0, every.stderr
    assert re.search(
        r"^csv: ok in [\d.]+ s, 1 run\(s\), 4 nodes and 2 edges written, watermark ",
        every.stdout,
        re.MULTILINE,
    ), every.stdout
    assert (
        "Needs [sources.csv] file"
        in lineagegraph_cli(plugin_site, store, "harvest", "csv", "--help").stdout
    )


def test_a_plugins_settings_model_checks_its_table(plugin_site: Path, tmp_path: Path) -> None:
    """[sources.csv] is validated by the plug-in's settings_model before it runs: a typo or a
    bad value stops it as a built-in section's would, naming both spellings; a good value is
    read from the model (a `;` delimiter)."""
    store, pairs = tmp_path / "store", tmp_path / "copies.csv"
    pairs.write_text("s3://lake/raw/orders;s3://lake/curated/orders\n")
    env = {"LINEAGEGRAPH_SOURCES__CSV__FILE": str(pairs)}
    typo = lineagegraph_cli(
        plugin_site, store, "harvest", "csv", LINEAGEGRAPH_SOURCES__CSV__DELIMTER=";", **env
    )
    assert typo.returncode == 2, typo.stderr
    assert (
        "invalid setting sources.csv.delimter / LINEAGEGRAPH_SOURCES__CSV__DELIMTER: "
        "unknown setting"
    ) in typo.stderr
    bad = lineagegraph_cli(
        plugin_site,
        store,
        "harvest",
        "all",
        "--only",
        "csv",
        LINEAGEGRAPH_SOURCES__CSV__DELIMITER=";;",
        **env,
    )
    assert bad.returncode != 0
    assert re.search(
        r"^csv: FAILED in .*invalid setting sources\.csv\.delimiter / "
        r"LINEAGEGRAPH_SOURCES__CSV__DELIMITER: String should have at most 1 "
        r"character",
        bad.stdout,
        re.MULTILINE,
    ), bad.stdout
    ran = lineagegraph_cli(
        plugin_site, store, "harvest", "csv", LINEAGEGRAPH_SOURCES__CSV__DELIMITER=";", **env
    )
    assert ran.returncode == 0, ran.stderr
    assert re.fullmatch(rf"{pairs}: 1 pairs; run \w+: success\n", ran.stdout)


class RawHarvester:
    """A plug-in without a settings_model: its table reaches it as written, a plain dict."""

    name = "raw"
    section = None
    needs = "[sources.raw]"
    seen: ClassVar[dict[str, object]] = {}

    def not_configured(self, settings: lineagegraph.Settings) -> str | None:
        return None

    def run(
        self, store: object, settings: lineagegraph.Settings, *, progress: object
    ) -> list[lineagegraph.HarvestReport]:
        RawHarvester.seen = settings.sources["raw"]
        return []


def test_a_plugin_without_a_settings_model_gets_its_table_unchecked(tmp_path: Path) -> None:
    from lineagegraph.settings import load_settings

    settings = load_settings(
        None, graph={"data_dir": tmp_path / "store"}, sources={"raw": {"anY_key": [1, "x"]}}
    )
    with lineagegraph.open_store(settings) as store:
        assert lineagegraph.harvest_source(RawHarvester(), store, settings) == []
    assert RawHarvester.seen == {"anY_key": [1, "x"]}


def test_a_broken_plugin_is_left_out_with_a_warning(tmp_path: Path) -> None:
    site = tmp_path / "site"
    dist = site / "lineagegraph_broken-0.1.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: lineagegraph-broken\nVersion: 0.1\n"
    )
    (dist / "entry_points.txt").write_text(
        "[lineagegraph.harvesters]\nbroken = lineagegraph_missing:Harvester\n"
        "taken = lineagegraph.harvest.s3:S3Harvester\n"
    )
    listed = lineagegraph_cli(site, tmp_path / "store", "harvest", "list")
    assert listed.returncode == 0, listed.stderr
    assert (
        "harvester plug-in 'broken' (lineagegraph_missing:Harvester) not loaded: No module "
        "named 'lineagegraph_missing'" in listed.stderr
    )
    assert (
        "harvester plug-in 'taken' (lineagegraph.harvest.s3:S3Harvester) not loaded: the "
        "name 's3' is taken" in listed.stderr
    )
    names = [line.split()[0] for line in listed.stdout.splitlines()[2:-1]]
    assert names == ["s3", "s3-access", "snowflake", "spark", "openlineage", "kafka", "dbt"]


def test_openlineage_paths_join_harvest_all(tmp_path: Path) -> None:
    events = tmp_path / "events"
    events.mkdir()
    (events / "a.jsonl").write_text(json.dumps(EVENT) + "\n")
    config = tmp_path / "lineagegraph.toml"
    bad = DATA / "bad_input.jsonl"
    config.write_text(
        f'[graph]\ndata_dir = "{tmp_path / "store"}"\n'
        f'[openlineage]\npaths = ["{events}", "{bad}"]\n'
    )
    result = CliRunner().invoke(cli, ["--config", str(config), "harvest", "all"])
    # bad_input.jsonl holds malformed lines: its run is partial, so the source is not ok
    assert result.exit_code == 5, result.output
    line = next(x for x in result.output.splitlines() if x.startswith("openlineage: "))
    assert line.startswith("openlineage: partial/success in ") and "2 run(s)" in line
    assert f"warning: {DATA / 'bad_input.jsonl'}:2: malformed JSON" in result.output
    assert "error: 1 source(s) failed: openlineage" in result.output
    assert "s3: skipped (no [s3] buckets)" in result.output

    config.write_text(
        f'[graph]\ndata_dir = "{tmp_path / "store"}"\n[openlineage]\npaths = ["{events}"]\n'
    )
    again = CliRunner().invoke(
        cli, ["--config", str(config), "harvest", "all", "--only", "openlineage"]
    )
    assert again.exit_code == 0, again.output
    assert "openlineage: ok in " in again.output
    listed = CliRunner().invoke(cli, ["--config", str(config), "harvest", "list"])
    assert re.search(r"^openlineage +yes ", listed.output, re.MULTILINE), listed.output


def test_an_unknown_source_is_a_usage_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        cli, ["--data-dir", str(tmp_path / "store"), "harvest", "all", "--only", "nosuch"]
    )
    assert result.exit_code == 2
    assert (
        "error: no source named 'nosuch'; known: s3, s3-access, snowflake, spark, openlineage"
        in result.output
    )
    assert not (tmp_path / "store").exists()


def test_the_api_runs_a_source_with_options_and_the_reports(
    moto: BaseClient, moto_endpoint: str, bucket: str, tmp_path: Path
) -> None:
    put_many(moto, bucket, {"raw/a.csv": (b"a,b\n", "STANDARD"),
                            "raw/b.csv": (b"12345", "STANDARD_IA"),
                            "other/c.csv": (b"x", "STANDARD")})  # fmt: skip
    graph = lineagegraph.Settings().graph.model_copy(update={"data_dir": tmp_path / "store"})
    settings = s3_settings(moto_endpoint).model_copy(update={"graph": graph})
    ticks: list[lineagegraph.Tick] = []
    with lineagegraph.open_store(settings) as store:
        reports = lineagegraph.harvest_source(
            S3Harvester(bucket=bucket, prefixes=("raw/",)), store, settings, progress=ticks.append
        )
        assert [(r.system, r.scope, r.status, r.errors) for r in reports] == [
            ("s3", f"s3://{bucket}/raw/", "success", [])
        ]
        assert reports[0].counts["objects"] == 2 and reports[0].summary.startswith(
            f"s3://{bucket}/raw/: 2 objects (9 B)"
        )
        assert ticks and ticks[-1].source == f"s3://{bucket}" and ticks[-1].done == 2
        orphans = lineagegraph.orphans(store, settings, buckets=[bucket])
        cost = lineagegraph.cost_report(store, settings, by="bucket")
    document = json.loads(orphans.render("json"))
    assert document["report"] == "orphans" and document["buckets"] == [bucket]
    assert sum(row["objects"] for row in document["rows"]) == 2  # nothing read them
    assert cost.render("csv").splitlines()[0].startswith("bucket,")


class ModelledHarvester(RawHarvester):
    """A plug-in with a settings_model whose run does not read it: lineagegraph checks the
    table before run, the plug-in need not."""

    name = "modelled"
    settings_model = Section  # no keys at all

    def run(
        self, store: object, settings: lineagegraph.Settings, *, progress: object
    ) -> list[lineagegraph.HarvestReport]:
        raise AssertionError("ran with a table its model refuses")


def test_a_settings_model_is_checked_before_the_source_runs(tmp_path: Path) -> None:
    from lineagegraph.settings import load_settings

    settings = load_settings(
        None, graph={"data_dir": tmp_path / "store"}, sources={"modelled": {"typo": 1}}
    )
    with (
        lineagegraph.open_store(settings) as store,
        pytest.raises(
            ConfigError,
            match=(
                r"^invalid setting sources\.modelled\.typo / LINEAGEGRAPH_SOURCES__MODELLED__TYPO: "
                r"unknown setting"
            ),
        ),
    ):
        lineagegraph.harvest_source(ModelledHarvester(), store, settings)
