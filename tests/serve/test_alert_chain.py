"""The whole chain on loopback with the real programs: Prometheus scrapes a real `serve`'s
/metrics with its bearer token and evaluates the shipped rules; what fires goes to a real
Alertmanager, which also receives serve's own pushed alerts and posts both to a webhook in the
test; `amtool` sees them."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from alert_fixtures import ALERTMANAGER, MARTS, RAW, Receiver, alertmanager, free_port, late_chain
from serve_fixtures import Server

from lineagegraph.graph.store import open_store
from lineagegraph.pipeline import harvest_run, now_ms
from lineagegraph.questions.alerts import HOUR_MS
from lineagegraph.settings import GraphSettings

RULES = Path(__file__).resolve().parents[2] / "config" / "prometheus" / "rules.yml"
PROMETHEUS, AMTOOL = shutil.which("prometheus"), shutil.which("amtool")

pytestmark = pytest.mark.skipif(
    PROMETHEUS is None or AMTOOL is None or shutil.which(ALERTMANAGER) is None,
    reason="needs Debian's prometheus and prometheus-alertmanager (scripts/test.sh installs them)",
)


def prometheus(tmp_path: Path, serve: Server, alertmanager_url: str) -> subprocess.Popen[bytes]:
    """Prometheus scraping serve every second with its token, the shipped rules, alerting to
    Alertmanager."""
    port = free_port()
    config = tmp_path / "prometheus.yml"
    config.write_text(
        "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
        f"rule_files: [{RULES}]\n"
        "alerting:\n  alertmanagers:\n"
        f"  - static_configs: [{{targets: ['{alertmanager_url.split('//')[1]}']}}]\n"
        "scrape_configs:\n- job_name: lineagegraph\n"
        f"  authorization: {{credentials: {serve.token}}}\n"
        f"  static_configs: [{{targets: ['127.0.0.1:{serve.port}']}}]\n"
    )
    assert PROMETHEUS
    return subprocess.Popen(
        [PROMETHEUS, f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'prom'}",
         f"--web.listen-address=127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip


def amtool_alerts(url: str) -> list[dict[str, Any]]:
    assert AMTOOL
    done = subprocess.run(
        [AMTOOL, "alert", "query", "--alertmanager.url", url, "-o", "json"],
        capture_output=True, text=True, timeout=30, check=True,
    )  # fmt: skip
    return list(json.loads(done.stdout))


def test_prometheus_rules_and_pushed_alerts_reach_a_webhook_through_alertmanager(
    tmp_path: Path,
) -> None:
    data = tmp_path / "store"
    with open_store(GraphSettings(data_dir=data)) as store:
        store.init_schema()
        late_chain(store, now_ms() - 10 * HOUR_MS)
        with pytest.raises(RuntimeError), harvest_run(store, "s3", "raw"):
            raise RuntimeError("listing the bucket failed")
    hook = Receiver()
    am, am_url = alertmanager(tmp_path, hook)
    processes: list[subprocess.Popen[bytes]] = [am]
    try:
        env = {"LINEAGEGRAPH_ALERTS__INTERVAL_SECONDS": "1",
               "LINEAGEGRAPH_ALERTS__ALERTMANAGER_URLS": json.dumps([am_url])}  # fmt: skip
        with Server(data, extra_env=env).running() as serve:
            processes.append(prometheus(tmp_path, serve, am_url))
            wanted = {"LineagegraphAlertsFiring", "LineageHarvestFailing",
                      "lineagegraph_freshness", "lineagegraph_harvest_failing"}  # fmt: skip
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                names = {a["labels"]["alertname"] for a in amtool_alerts(am_url)}
                posted = {a["labels"]["alertname"] for b in hook.bodies() for a in b["alerts"]}
                if wanted <= names and wanted <= posted:
                    break
                time.sleep(0.5)
            assert wanted <= names, names
            assert wanted <= posted, posted
            seen = {
                (a["labels"]["alertname"], a["labels"].get("rule") or a["labels"].get("asset"))
                for b in hook.bodies()
                for a in b["alerts"]
            }
            assert ("LineagegraphAlertsFiring", "freshness") in seen  # from /metrics
            assert ("lineagegraph_freshness", RAW) in seen  # pushed by serve
            pushed = next(
                a for b in hook.bodies() for a in b["alerts"]
                if a["labels"]["alertname"] == "lineagegraph_freshness"
            )  # fmt: skip
            assert pushed["annotations"]["explains"].splitlines() == MARTS
    finally:
        for process in reversed(processes):
            process.terminate()
            process.wait(timeout=30)
        hook.stop()
