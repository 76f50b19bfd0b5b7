"""Alerts reach real receivers over loopback HTTP: a webhook that is down and then up (resent
once, signed), Slack's and PagerDuty's documented shapes, fire once and resolve once across
evaluations, a real Alertmanager that posts to a webhook, and the `alerts` command."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from alert_fixtures import (
    ALERTMANAGER,
    MARTS,
    RAW,
    Receiver,
    alertmanager,
    free_port,
    late_chain,
    written_again,
)
from click.testing import CliRunner

from lineagegraph.cli import cli
from lineagegraph.graph.store import GraphStore, open_store
from lineagegraph.notify import Evaluation, notify, state_path
from lineagegraph.notify.receivers import SIGNATURE_HEADER, dedup_key
from lineagegraph.pipeline import now_ms
from lineagegraph.questions.alerts import HOUR_MS, evaluate
from lineagegraph.settings import AlertSettings, GraphSettings, Settings

SECRET = "hook-s3cret"
SRC = Path(__file__).resolve().parents[2] / "src"  # this checkout's code in the subprocess


def run_alerts(
    store: GraphStore, settings: Settings, now: int, sleep: Callable[[float], None] = time.sleep
) -> Evaluation:
    """What `lineagegraph alerts` and serve do: evaluate over the graph, then notify."""
    return notify(settings, evaluate(store, settings.alerts, now), now, sleep=sleep)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver()
    yield r
    r.stop()


@pytest.fixture
def graph(tmp_path: Path) -> Iterator[tuple[GraphStore, GraphSettings]]:
    settings = GraphSettings(data_dir=tmp_path / "store")
    with open_store(settings) as store:
        store.ensure_schema()
        yield store, settings


def settings_for(graph_settings: GraphSettings, **alerts: Any) -> Settings:
    return Settings(graph=graph_settings, alerts=AlertSettings(backoff_seconds=0, **alerts))


def test_webhook_down_then_up_gets_each_edge_once_signed(
    graph: tuple[GraphStore, GraphSettings], tmp_path: Path
) -> None:
    store, gs = graph
    start = now_ms() - 10 * HOUR_MS
    late_chain(store, start)
    port = free_port()
    settings = settings_for(gs, webhook_url=f"http://127.0.0.1:{port}/hook", webhook_secret=SECRET)
    waits: list[float] = []

    first = run_alerts(store, settings, now_ms(), sleep=waits.append)  # nothing listens
    assert [a.key for a in first.alerts] == [f"freshness:{RAW}"]
    assert first.deliveries[0].sent == 0 and first.deliveries[0].waiting == 1
    assert "Connection refused" in (first.deliveries[0].error or "")
    assert waits == [0, 0, 0]  # three retries after the first try
    saved = json.loads(state_path(settings).read_text())
    assert [n["alert"]["key"] for n in saved["outbox"]["webhook"]] == [f"freshness:{RAW}"]

    hook = Receiver(port)
    try:
        for _ in range(3):  # up again: the kept notification once, nothing on later runs
            again = run_alerts(store, settings, now_ms())
            assert again.edges == [] and again.deliveries[0].error is None
        assert len(hook.posts) == 1
        post = hook.posts[0]
        expected = "sha256=" + hmac.new(SECRET.encode(), post["body"], hashlib.sha256).hexdigest()
        assert post["headers"][SIGNATURE_HEADER] == expected
        (note,) = json.loads(post["body"])["notifications"]
        assert note["event"] == "firing" and note["alert"]["subject"] == RAW
        assert sorted(note["alert"]["explains"]) == sorted(MARTS)
        assert note["alert"]["blast"]["assets"] == 5

        written_again(store, now_ms())
        for _ in range(2):
            run_alerts(store, settings, now_ms())
        assert len(hook.posts) == 2
        (resolved,) = json.loads(hook.posts[1]["body"])["notifications"]
        assert resolved["event"] == "resolved" and resolved["alert"]["ended"] is not None
    finally:
        hook.stop()


def test_a_receiver_answering_503_is_retried_with_doubling_waits(
    graph: tuple[GraphStore, GraphSettings], receiver: Receiver
) -> None:
    store, gs = graph
    late_chain(store, now_ms() - 10 * HOUR_MS)
    settings = Settings(
        graph=gs,
        alerts=AlertSettings(webhook_url=receiver.url, retries=2, backoff_seconds=0.25),
    )
    receiver.status = 503
    waits: list[float] = []

    def sleep(seconds: float) -> None:
        waits.append(seconds)
        if len(waits) == 2:
            receiver.status = 200  # back before the last retry

    evaluation = run_alerts(store, settings, now_ms(), sleep=sleep)
    assert waits == [0.25, 0.5]
    assert evaluation.deliveries[0].sent == 1 and len(receiver.posts) == 1


def test_slack_and_pagerduty_shapes(
    graph: tuple[GraphStore, GraphSettings], receiver: Receiver
) -> None:
    store, gs = graph
    late_chain(store, now_ms() - 10 * HOUR_MS)
    settings = settings_for(
        gs,
        slack_webhook_url=f"{receiver.url}/slack",
        pagerduty_routing_key="R0UT1NGKEY0123456789012345678901",
        pagerduty_url=f"{receiver.url}/pd",
        owners={"snowflake://acme/**": "data-team <data@acme.example>"},
    )
    receiver.answer = b'{"status":"success","message":"Event processed"}'
    run_alerts(store, settings, now_ms())
    written_again(store, now_ms())
    run_alerts(store, settings, now_ms())

    slack = [json.loads(p["body"]) for p in receiver.posts if p["path"] == "/slack"]
    assert [set(m) for m in slack] == [{"text"}, {"text"}]
    assert slack[0]["text"].startswith(f"*[FIRING] freshness warning: {RAW}:")
    assert "data-team &lt;data@acme.example&gt;" in slack[0]["text"]  # Slack's escaping
    assert slack[1]["text"].startswith("*[RESOLVED] ")

    pd = [json.loads(p["body"]) for p in receiver.posts if p["path"] == "/pd"]
    trigger, resolve = pd
    assert set(trigger) == {"routing_key", "event_action", "dedup_key", "payload"}
    assert trigger["event_action"] == "trigger"
    assert trigger["dedup_key"] == resolve["dedup_key"] == f"freshness:{RAW}"
    payload = trigger["payload"]
    assert {"summary", "source", "severity"} <= set(payload)  # required by Events v2
    assert payload["severity"] in {"critical", "error", "warning", "info"}
    assert len(payload["summary"]) <= 1024 and payload["source"] == RAW
    assert payload["custom_details"]["downstream"] == MARTS
    assert resolve == {
        "routing_key": "R0UT1NGKEY0123456789012345678901",
        "dedup_key": trigger["dedup_key"],
        "event_action": "resolve",
    }
    assert dedup_key("x" * 300).startswith("sha256:") and len(dedup_key("x" * 300)) < 255


def test_the_alerts_command_prints_every_format_and_fails_on_severity(
    graph: tuple[GraphStore, GraphSettings], tmp_path: Path
) -> None:
    store, gs = graph
    late_chain(store, now_ms() - 10 * HOUR_MS)
    store.close()
    config = tmp_path / "lineagegraph.toml"
    config.write_text('[alerts]\nseverity = {freshness = "critical"}\n')
    runner = CliRunner()

    def invoke(*args: str) -> Any:
        return runner.invoke(
            cli, ["--config", str(config), "--data-dir", str(gs.data_dir), "alerts", *args]
        )

    table = invoke("--dry-run")
    assert table.exit_code == 0, table.output
    assert table.stdout.splitlines()[0].split()[:3] == ["state", "severity", "rule"]
    assert "firing" in table.stdout and RAW in table.stdout
    data = json.loads(invoke("--dry-run", "--format", "json").stdout)
    assert [a["key"] for a in data["alerts"]] == [f"freshness:{RAW}"]
    csv = invoke("--dry-run", "--format", "csv").stdout.splitlines()
    assert csv[0].startswith("state,severity,rule,subject") and len(csv) == 2
    assert invoke("--dry-run", "--format", "markdown").stdout.startswith("| state")
    assert not state_path(Settings(graph=gs)).exists()  # a dry run remembers nothing

    failed = invoke("--fail-on", "critical")
    assert failed.exit_code == 9, failed.output
    assert f"1 alert(s) of severity critical or worse firing: freshness:{RAW}" in failed.stderr
    assert state_path(Settings(graph=gs)).exists()
    bad = invoke("--fail-on", "fatal")
    assert bad.exit_code == 2


def wait_for(hook: Receiver, status: str) -> dict[str, Any]:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        for body in hook.bodies():
            if body["status"] == status:
                return body
        time.sleep(0.1)
    raise AssertionError(f"Alertmanager posted no {status} notification: {hook.bodies()}")


@pytest.mark.skipif(shutil.which(ALERTMANAGER) is None, reason="prometheus-alertmanager absent")
def test_a_real_alertmanager_takes_firing_and_resolved_alerts(
    graph: tuple[GraphStore, GraphSettings], receiver: Receiver, tmp_path: Path
) -> None:
    store, gs = graph
    late_chain(store, now_ms() - 10 * HOUR_MS)
    process, url = alertmanager(tmp_path, receiver)
    try:
        settings = settings_for(gs, alertmanager_urls=[url])
        first = run_alerts(store, settings, now_ms())
        assert first.deliveries[0].error is None
        firing = wait_for(receiver, "firing")
        (alert,) = firing["alerts"]
        assert alert["labels"] == {
            "alertname": "lineagegraph_freshness", "severity": "warning", "asset": RAW,
        }  # fmt: skip
        assert alert["annotations"]["downstream_assets"] == "5"
        assert alert["annotations"]["explains"].splitlines() == MARTS

        written_again(store, now_ms())
        run_alerts(store, settings, now_ms())
        resolved = wait_for(receiver, "resolved")
        assert resolved["alerts"][0]["labels"]["asset"] == RAW
        assert resolved["alerts"][0]["endsAt"] >= alert["startsAt"]
        with urllib.request.urlopen(f"{url}/api/v2/alerts?active=true", timeout=5) as answer:
            assert json.loads(answer.read()) == []
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_killed_while_sending_the_notification_is_sent_at_the_next_run(
    graph: tuple[GraphStore, GraphSettings], receiver: Receiver, tmp_path: Path
) -> None:
    """The edge and the outbox are saved before sending: `alerts` killed (SIGKILL) while the
    receiver holds its post sends it again next run (at least once), then never again."""
    store, gs = graph
    late_chain(store, now_ms() - 10 * HOUR_MS)
    store.close()
    config = tmp_path / "lineagegraph.toml"
    config.write_text(f'[alerts]\nwebhook_url = "{receiver.url}/hook"\ntimeout_seconds = 60\n')
    args = ["--config", str(config), "--data-dir", str(gs.data_dir), "alerts"]
    receiver.delay = 60
    process = subprocess.Popen(
        [sys.executable, "-m", "lineagegraph.cli", *args],
        env={**os.environ, "PYTHONPATH": str(SRC)},
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not receiver.posts and time.monotonic() < deadline:
            time.sleep(0.05)
        assert receiver.posts, "the alerts command never posted"
    finally:
        process.kill()
        process.wait(timeout=30)
    saved = json.loads(state_path(Settings(graph=gs)).read_text())
    assert list(saved["firing"]) == [f"freshness:{RAW}"]
    assert [n["alert"]["key"] for n in saved["outbox"]["webhook"]] == [f"freshness:{RAW}"]

    receiver.delay = 0
    runner = CliRunner()
    for _ in range(2):
        again = runner.invoke(cli, args)
        assert again.exit_code == 0, again.output
    assert len(receiver.posts) == 2  # the killed run's post, then the same notification once
    assert receiver.bodies()[0]["notifications"] == receiver.bodies()[1]["notifications"]
    assert json.loads(state_path(Settings(graph=gs)).read_text())["outbox"]["webhook"] == []


def test_an_unreadable_state_file_is_a_clear_error(
    graph: tuple[GraphStore, GraphSettings], tmp_path: Path
) -> None:
    store, gs = graph
    store.close()
    path = state_path(Settings(graph=gs))
    path.parent.mkdir(parents=True)
    path.write_text('{"firing": {')
    done = CliRunner().invoke(cli, ["--data-dir", str(gs.data_dir), "alerts"])
    assert done.exit_code == 2
    assert f"cannot read the alert state {str(path)!r}" in done.stderr
    assert path.read_text() == '{"firing": {'  # left as it was


@pytest.mark.parametrize("command", ["alerts", "serve"])
def test_a_secret_without_its_receiver_stops_the_command(tmp_path: Path, command: str) -> None:
    done = CliRunner().invoke(
        cli,
        ["--data-dir", str(tmp_path / "store"), command],
        env={"LINEAGEGRAPH_ALERTS__WEBHOOK_SECRET": "s3cret-value"},
    )
    assert done.exit_code == 2, done.output
    assert "webhook_secret is set but webhook_url is not" in done.stderr
    assert "s3cret-value" not in done.output
