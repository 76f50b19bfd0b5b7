"""Answers as JSON: what `--format json` prints and serve answers with."""

from __future__ import annotations

import dataclasses
import json
from typing import Any


def to_json(value: Any) -> str:
    """Dataclasses, tuples and tuple-keyed dicts as plain JSON."""
    return json.dumps(_plain(value), indent=2, ensure_ascii=False)


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {("/".join(k) if isinstance(k, tuple) else k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value
