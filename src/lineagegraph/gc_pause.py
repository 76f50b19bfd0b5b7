"""Holding off Python's cycle collector while a step builds millions of objects.

A 10,000,000-object lake's orphan report reads a reply of 200,000 rows (each value a small
list of its own) and builds as many report rows; none of these objects is in a reference
cycle. The collector starts after every few hundred new containers, and as the objects pile
up its full passes re-scan all of them again and again, a large share of the report's Python
time (figures: docs/benchmarks.md). Objects are still freed as soon as nothing refers to
them; the collector resumes afterwards.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def paused() -> Iterator[None]:
    """Pause the cycle collector for the block (or the function it decorates).

    Nesting, and threads that overlap, are safe: only the outermost pause that found the
    collector running starts it again.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
