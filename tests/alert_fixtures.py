"""Shared by the alert tests: a loopback HTTP receiver that records what is posted to it, and
a graph whose raw dataset stops being written, with five marts below it."""

from __future__ import annotations

import json
import socket
import subprocess
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from lineagegraph.graph.store import GraphStore
from lineagegraph.graph.writer import GraphWriter
from lineagegraph.model import Asset, Flow, Item, Transformation
from lineagegraph.questions.alerts import HOUR_MS

RAW = "s3://raw/events ü"
MARTS = [f"snowflake://acme/MARTS.PUBLIC.M{i}" for i in range(5)]
ALERTMANAGER = "/usr/bin/prometheus-alertmanager"


class Receiver:
    """A loopback HTTP server that records every POST and answers with `status` (503: down
    for a while); `stop` closes its port so that nothing answers at all."""

    def __init__(self, port: int = 0) -> None:
        self.posts: list[dict[str, Any]] = []
        self.status = 200
        self.answer = b"ok"
        self.delay = 0.0  # seconds before answering (a slow receiver), after recording
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                if outer.status < 300:
                    outer.posts.append(
                        {"path": self.path, "headers": dict(self.headers), "body": body}
                    )
                time.sleep(outer.delay)
                self.send_response(outer.status)
                self.end_headers()
                self.wfile.write(outer.answer)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def bodies(self) -> list[Any]:
        return [json.loads(p["body"]) for p in self.posts]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def write(store: GraphStore, items: list[Item]) -> None:
    writer = GraphWriter(store)
    writer.add_all(items)
    writer.flush()


def late_chain(store: GraphStore, start: int) -> None:
    """RAW written hourly for six hours from `start` by a job, flowing into five marts."""
    items: list[Item] = [Asset(RAW, "Dataset", "s3", "events", start)]
    items += [Asset(m, "Table", "snowflake", m.rsplit(".", 1)[1], start) for m in MARTS]
    for hour in range(6):
        at = start + hour * HOUR_MS
        items.append(Transformation("spark://load", "spark", "load", f"r{hour}", at, writes=(RAW,)))
        for src, dst in zip([RAW, *MARTS], MARTS, strict=False):
            items.append(Flow(src, dst, at, via="dbt://m"))
    write(store, items)


def written_again(store: GraphStore, at: int) -> None:
    items: list[Item] = [
        Transformation("spark://load", "spark", "load", "again", at, writes=(RAW,))
    ]
    items += [Flow(s, d, at, via="dbt://m") for s, d in zip([RAW, *MARTS], MARTS, strict=False)]
    write(store, items)


def alertmanager(tmp_path: Path, hook: Receiver) -> tuple[subprocess.Popen[bytes], str]:
    """A real Alertmanager on loopback whose one receiver is `hook`, data under tmp_path."""
    port = free_port()
    config = tmp_path / "alertmanager.yml"
    config.write_text(
        "route:\n  receiver: hook\n  group_by: [alertname, asset]\n  group_wait: 1s\n"
        "  group_interval: 1s\n  repeat_interval: 1h\n"
        f"receivers:\n- name: hook\n  webhook_configs:\n  - url: {hook.url}/am\n"
        "    send_resolved: true\n"
    )
    process = subprocess.Popen(
        [ALERTMANAGER, f"--config.file={config}", f"--storage.path={tmp_path / 'am-data'}",
         f"--web.listen-address=127.0.0.1:{port}", "--cluster.listen-address="],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while True:
        try:
            with urllib.request.urlopen(f"{url}/-/ready", timeout=1) as answer:
                if answer.status == 200:
                    return process, url
        except OSError:
            if time.monotonic() > deadline or process.poll() is not None:
                process.kill()
                raise AssertionError("Alertmanager did not start") from None
            time.sleep(0.1)
