"""Shared by the alert tests: a loopback HTTP receiver that records what is posted to it, and
a graph whose raw dataset stops being written, with five marts below it."""

from __future__ import annotations

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from lineagegraph.graph.store import GraphStore
from lineagegraph.graph.writer import GraphWriter
from lineagegraph.model import Asset, Flow, Item, Transformation
from lineagegraph.questions.alerts import HOUR_MS

RAW = "s3://raw/events ü"
MARTS = [f"snowflake://acme/MARTS.PUBLIC.M{i}" for i in range(5)]


class Receiver:
    """A loopback HTTP server that records every POST and answers with `status` (503: down
    for a while); `stop` closes its port so that nothing answers at all."""

    def __init__(self, port: int = 0) -> None:
        self.posts: list[dict[str, Any]] = []
        self.status = 200
        self.answer = b"ok"
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                if outer.status < 300:
                    outer.posts.append(
                        {"path": self.path, "headers": dict(self.headers), "body": body}
                    )
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
