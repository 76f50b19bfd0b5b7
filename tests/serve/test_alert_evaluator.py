"""serve's evaluator process (lineagegraph.serve.alerting.Evaluator): the same alerts as an
evaluation in this process, notified once, from a process of its own at a lower CPU priority,
started again after it died, and an evaluation it cannot do as an error that says why."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
from alert_fixtures import MARTS, RAW, late_chain

from lineagegraph.alerts_settings import AlertSettings
from lineagegraph.graph.store import open_store
from lineagegraph.notify import state_path
from lineagegraph.notify.state import AlertBook
from lineagegraph.questions.alerts import HOUR_MS, evaluate
from lineagegraph.serve.alerting import EvaluationFailed, Evaluator
from lineagegraph.settings import GraphSettings, Settings

NOW = 1_717_000_000_000


def test_the_evaluator_gives_what_evaluate_gives_from_a_lower_priority_process(
    tmp_path: Path,
) -> None:
    graph = GraphSettings(data_dir=tmp_path / "store")
    settings = AlertSettings(
        owners={"snowflake://acme/MARTS.**": "analytics@acme.example"}, evaluator_nice=5
    )
    evaluator = Evaluator(Settings(graph=graph, alerts=settings))
    with open_store(graph) as store:
        store.ensure_schema()
        late_chain(store, NOW - 10 * HOUR_MS)
        here = evaluate(store, settings, NOW)
        try:
            there = evaluator.evaluate(NOW)
            pid = evaluator.pid
            assert pid is not None and pid != os.getpid()
            assert os.getpriority(os.PRIO_PROCESS, pid) == os.getpriority(os.PRIO_PROCESS, 0) + 5
            (alert,) = here
            assert alert.subject == RAW and sorted(alert.explains) == MARTS
            assert there.firing == {("freshness", "warning"): 1}
            assert there.deliveries == []  # no receivers set
            book = AlertBook.load(state_path(Settings(graph=graph)))
            assert book.firing == {alert.key: alert}  # notified: blast radius, folding kept

            os.kill(pid, signal.SIGINT)  # Ctrl-C in serve's terminal: serve stops it, in order
            assert evaluator.evaluate(NOW) == there and evaluator.pid == pid

            os.kill(pid, signal.SIGKILL)  # killed mid-life: this evaluation fails, saying so
            with pytest.raises(EvaluationFailed, match="evaluator process ended"):
                evaluator.evaluate(NOW)
            assert evaluator.evaluate(NOW) == there  # the next one starts it anew
            assert evaluator.pid not in (None, pid)
        finally:
            evaluator.close()
        assert evaluator.pid is None
        assert store.alive()  # the evaluator's leaving left serve's server running


def test_an_evaluation_the_evaluator_cannot_do_fails_with_the_reason(tmp_path: Path) -> None:
    graph = GraphSettings(uri="bolt://127.0.0.1:9", data_dir=tmp_path)
    evaluator = Evaluator(Settings(graph=graph))
    try:
        with pytest.raises(EvaluationFailed, match=r"127\.0\.0\.1:9"):
            evaluator.evaluate(NOW)
        assert evaluator.pid is not None  # the process lives on for the next evaluation
    finally:
        evaluator.close()
