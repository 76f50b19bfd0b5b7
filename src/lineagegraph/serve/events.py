"""Request bodies of POST /api/v1/lineage: checked here, so a malformed event is refused (400,
with the reason) before anything is spooled, and everything spooled can be ingested.

A body is one OpenLineage event (a RunEvent, DatasetEvent or JobEvent, as the openlineage-python
HttpTransport sends it) or a JSON array of them (the batch form), optionally gzip-compressed.
A batch is taken whole or not at all.
"""

from __future__ import annotations

import json
import zlib
from typing import Any

from lineagegraph.harvest.openlineage import EventError, EventMapper, EventTooLarge
from lineagegraph.harvest.openlineage_settings import OpenLineageSettings
from lineagegraph.identity import FoldRules
from lineagegraph.jsonlines import BadText, parse_json


class BadRequest(ValueError):
    """A body or event that cannot be accepted; the message is the reason given back."""

    def __init__(self, reason: str, status: int = 400) -> None:
        super().__init__(reason)
        self.status = status


def decode_body(body: bytes, encoding: str | None, limit: int) -> str:
    """The request's text: gunzipped when sent with Content-Encoding gzip, never more than
    `limit` bytes once decompressed (a small bomb cannot fill the memory)."""
    encoding = (encoding or "identity").strip().lower()
    if encoding == "gzip":
        inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
        try:
            body = inflater.decompress(body, limit + 1)
        except zlib.error as exc:
            raise BadRequest(f"body is not valid gzip: {exc}") from None
        if len(body) > limit or inflater.unconsumed_tail:
            raise BadRequest(f"body is over {limit:,} bytes once decompressed", 413)
        if not inflater.eof:
            raise BadRequest("body is not valid gzip: the stream is cut short")
    elif encoding != "identity":
        raise BadRequest(f"Content-Encoding {encoding!r} is not supported (use gzip)", 415)
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadRequest(f"body is not UTF-8: byte {exc.start}") from None


class EventChecker:
    """Checks events with the harvester's own mapper, so that what it accepts is exactly what
    `harvest openlineage` ingests without a problem."""

    def __init__(self, rules: FoldRules, limits: OpenLineageSettings | None = None) -> None:
        self._mapper = EventMapper(rules, [], limits)

    def events(self, text: str) -> list[dict[str, Any]]:
        """The events of a body; BadRequest names the first one at fault (`[index]` in a batch)."""
        try:
            document = parse_json(text)
        except BadText as exc:
            raise BadRequest(f"body is not JSON: {exc}") from None
        batch = isinstance(document, list)
        events = document if batch else [document]
        if batch and not events:
            raise BadRequest("the batch is an empty array")
        for index, event in enumerate(events):
            where = f"event [{index}]" if batch else "event"
            try:
                self.check(event)
            except EventTooLarge as exc:
                raise BadRequest(f"{where}: {exc}", 413) from None
            except EventError as exc:
                raise BadRequest(f"{where}: {exc}") from None
        return events

    def check(self, event: Any) -> None:
        """Whether the harvester's mapper takes `event`; EventError says why not."""
        self._mapper.sighting(event)


def spool_lines(events: list[dict[str, Any]], text: str) -> bytes:
    """The events as JSON lines. A single event already on one line is kept as sent (encoding
    it again costs a third of the checking); others are written with ASCII escapes, which keep
    every name exact and each event on one line whatever characters it holds."""
    if len(events) == 1 and "\n" not in text and "\r" not in text:
        return text.strip().encode("utf-8") + b"\n"
    return "".join(json.dumps(e, separators=(",", ":")) + "\n" for e in events).encode("ascii")
