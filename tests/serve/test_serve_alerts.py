"""`serve` evaluates the alert rules every [alerts] interval_seconds: a signed webhook gets the
firing alert once and its resolution once, and /metrics counts the alerts firing."""

from __future__ import annotations

import hashlib
import hmac
import json
from pathlib import Path

from alert_fixtures import MARTS, RAW, Receiver, late_chain, written_again
from prometheus_client.parser import text_string_to_metric_families
from serve_fixtures import Server, wait_for

from lineagegraph.graph.store import open_store
from lineagegraph.notify.receivers import SIGNATURE_HEADER
from lineagegraph.pipeline import now_ms
from lineagegraph.questions.alerts import HOUR_MS
from lineagegraph.settings import GraphSettings

SECRET = "serve-hook-key"


def samples(server: Server, name: str) -> dict[tuple[tuple[str, str], ...], float]:
    text = server.get("/metrics").text
    return {
        tuple(sorted(s.labels.items())): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
        if s.name == name
    }


def test_serve_notifies_once_and_counts_alerts_firing(tmp_path: Path) -> None:
    data = tmp_path / "store"
    with open_store(GraphSettings(data_dir=data)) as store:
        store.init_schema()
        late_chain(store, now_ms() - 10 * HOUR_MS)
    hook = Receiver()
    env = {
        "LINEAGEGRAPH_ALERTS__INTERVAL_SECONDS": "0.3",
        "LINEAGEGRAPH_ALERTS__WEBHOOK_URL": f"{hook.url}/hook",
        "LINEAGEGRAPH_ALERTS__WEBHOOK_SECRET": SECRET,
    }
    try:
        with Server(data, extra_env=env).running() as server:
            wait_for(lambda: hook.posts)
            wait_for(lambda: samples(server, "lineagegraph_alert_evaluations_total")[()] >= 4)
            assert len(hook.posts) == 1  # evaluated again and again, notified once
            post = hook.posts[0]
            signed = hmac.new(SECRET.encode(), post["body"], hashlib.sha256).hexdigest()
            assert post["headers"][SIGNATURE_HEADER] == f"sha256={signed}"
            (note,) = json.loads(post["body"])["notifications"]
            assert note["event"] == "firing" and sorted(note["alert"]["explains"]) == MARTS
            firing = samples(server, "lineagegraph_alerts_firing")
            assert firing[(("rule", "freshness"), ("severity", "warning"))] == 1
            assert firing[(("rule", "quality"), ("severity", "critical"))] == 0
            # every rule (8) once, schema_change also at critical: a fixed set of label values
            assert len(firing) == 9
            assert firing[(("rule", "upstream_drift"), ("severity", "warning"))] == 0
            assert firing[(("rule", "schema_change"), ("severity", "critical"))] == 0
            waiting = samples(server, "lineagegraph_alert_notifications_waiting")
            assert waiting == {(("receiver", "webhook"),): 0}
            assert SECRET not in server.get("/metrics").text

            with open_store(GraphSettings(data_dir=data)) as store:  # serve's own server
                written_again(store, now_ms())
            wait_for(lambda: len(hook.posts) == 2)
            (resolved,) = json.loads(hook.posts[1]["body"])["notifications"]
            assert resolved["event"] == "resolved" and resolved["alert"]["subject"] == RAW
            wait_for(
                lambda: (
                    samples(server, "lineagegraph_alerts_firing")[
                        (("rule", "freshness"), ("severity", "warning"))
                    ]
                    == 0
                )
            )
        assert SECRET not in server.log()
    finally:
        hook.stop()
