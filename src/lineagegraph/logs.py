"""Logging for people (plain lines) and for schedulers (one JSON object per line)."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime

from lineagegraph.settings_base import redact

# Attributes every LogRecord has; anything else was passed with `extra=` and is structured data.
_STANDARD = set(vars(logging.makeLogRecord({}))) | {"message", "asctime", "taskName"}


class JsonFormatter(logging.Formatter):
    """`{"ts": ..., "level": ..., "logger": ..., "message": ..., **extra}` per line."""

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        entry.update({k: v for k, v in vars(record).items() if k not in _STANDARD})
        if record.exc_info:
            entry["traceback"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str, ensure_ascii=False)


class Redacting(logging.Formatter):
    """Another formatter's lines with URI passwords and query values masked: a library's
    debug line (a driver's) may quote a URI a user gave with credentials in it."""

    def __init__(self, inner: logging.Formatter) -> None:
        super().__init__()
        self.inner = inner

    def format(self, record: logging.LogRecord) -> str:
        return redact(self.inner.format(record))


def configure(debug: bool, fmt: str) -> None:
    """Logs go to stderr: INFO for lineagegraph's own progress, DEBUG with --debug."""
    handler = logging.StreamHandler()
    if fmt == "json":
        handler.setFormatter(Redacting(JsonFormatter()))
    else:
        plain = logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
        handler.setFormatter(Redacting(plain))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.DEBUG if debug else logging.WARNING)
    logging.getLogger("lineagegraph").setLevel(logging.DEBUG if debug else logging.INFO)
