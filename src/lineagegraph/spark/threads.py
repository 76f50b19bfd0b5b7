"""What the listener's threads share: counters, and waiting for a queue to drain.

Spark's callback thread, the worker thread and the HTTP sender thread each count what they
do in one `Counts`; `flush` waits on each queue in turn.
"""

from __future__ import annotations

import queue
import threading
import time
from collections import Counter
from typing import Any


class Counts:
    """Counters shared by the callback thread, the worker thread and the sender thread."""

    def __init__(self) -> None:
        self._counts: Counter[str] = Counter()
        self._lock = threading.Lock()

    def add(self, key: str, n: int = 1) -> None:
        with self._lock:
            self._counts[key] += n

    def snapshot(self) -> Counter[str]:
        with self._lock:
            return Counter(self._counts)


def wait_for_queue(work: queue.Queue[Any], timeout: float) -> bool:
    """Wait until every item put on `work` is done (task_done); False if `timeout` ran out."""
    deadline = time.monotonic() + timeout
    with work.all_tasks_done:
        while work.unfinished_tasks:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            work.all_tasks_done.wait(left)
    return True
