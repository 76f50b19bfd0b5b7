"""Loads the Cypher statements in cypher/*.cypher by name; Python never builds Cypher itself."""

from __future__ import annotations

import hashlib
from functools import cache
from importlib import resources
from pathlib import Path

from lineagegraph.errors import QueryError


def cypher_dir() -> Path:
    """cypher/ inside an installed wheel, else the source tree's top-level cypher/."""
    packaged = Path(str(resources.files("lineagegraph"))) / "cypher"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[3] / "cypher"


@cache
def statement(name: str) -> str:
    """The text of cypher/{name}.cypher; names come from code, never from user input."""
    path = cypher_dir() / f"{name}.cypher"
    try:
        return path.read_text(encoding="utf-8").strip().rstrip(";")
    except FileNotFoundError:
        raise QueryError(f"no Cypher statement named {name!r} (looked for {path})") from None


def statement_names() -> list[str]:
    """Every statement lineagegraph ships, for `query --name` and the docs."""
    return sorted(p.stem for p in cypher_dir().glob("*.cypher") if not p.stem.startswith("schema."))


def schema_statements(backend: str) -> list[str]:
    """The schema file of one backend, split into its `;`-terminated statements."""
    text = statement(f"schema.{backend}")
    return [s.strip() for s in text.split(";") if s.strip() and not _only_comments(s)]


def _only_comments(text: str) -> bool:
    return all(not line.strip() or line.strip().startswith("//") for line in text.splitlines())


def schema_version(backend: str) -> str:
    """A fingerprint of one backend's schema file: a store marked with it needs no schema run."""
    return hashlib.sha256(statement(f"schema.{backend}").encode()).hexdigest()[:16]
