"""The status line every long-running command shows while it works."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

import click

from lineagegraph.harvest.base import Tick


class StatusLine:
    """One rewriting line on a terminal (stderr); when stderr is a file or a pipe (cron, CI), a
    plain log line every `log_every` seconds, or nothing if `log_every` is None."""

    def __init__(self, stream: TextIO | None = None, log_every: float | None = 10.0) -> None:
        self.stream: TextIO = sys.stderr if stream is None else stream
        self.tty = self.stream.isatty()
        self.every = 0.25 if self.tty else log_every
        self._last: float | None = None
        self._width = 0

    def update(self, text: Callable[[], str]) -> None:
        """Show `text()` unless the last line is too recent (text is built only when shown)."""
        if self.every is None:
            return
        now = time.monotonic()
        if self._last is not None and now - self._last < self.every:
            return
        self._last = now
        line = text()
        if self.tty:
            self._width = max(self._width, len(line))
            self.stream.write("\r" + line.ljust(self._width))
            self.stream.flush()
        else:
            click.echo(line, file=self.stream)

    def done(self) -> None:
        """End the terminal line, if one was drawn."""
        if self.tty and self._width:
            self.stream.write("\n")
            self.stream.flush()
        self._width = 0


class TickLine(StatusLine):
    """The progress of any harvest (lineagegraph.harvest.base.Progress): a line per source."""

    def __init__(self, stream: TextIO | None = None, log_every: float | None = 10.0) -> None:
        super().__init__(stream, log_every)
        self._source: str | None = None

    def __call__(self, tick: Tick) -> None:
        if tick.source != self._source:  # a new bucket or path: keep the last one's line
            self.done()
            self._source, self._last = tick.source, None
        self.update(tick.line)


@contextmanager
def tick_line() -> Iterator[TickLine]:
    """A TickLine that ends its terminal line however the harvest ends."""
    progress = TickLine()
    try:
        yield progress
    finally:
        progress.done()
