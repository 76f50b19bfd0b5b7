"""[graph]: where the store is (a Neo4j server, or the embedded FalkorDB files)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import Field, SecretStr, field_validator

from lineagegraph.settings_base import Section, no_empty_secret, redact

# Query-string keys that carry credentials: refused in [graph] uri, as a user:password@ is.
_CREDENTIAL_KEY = re.compile(
    r"(?i)(user(name)?|pass(word|wd)?|pwd|secret|token|auth\w*|credentials?|\w*key)"
)


class GraphSettings(Section):
    uri: str | None = Field(
        None,
        description="bolt:// or neo4j:// URI of a Neo4j server; unset means the embedded store.",
    )
    user: str = Field("neo4j", description="Neo4j user name.")
    password: SecretStr | None = Field(None, description="Neo4j password (never printed).")
    database: str | None = Field(None, description="Neo4j database name; unset = server default.")
    data_dir: Path = Field(
        Path(".lineagegraph"), description="Directory of the embedded store (FalkorDB files)."
    )
    graph_name: str = Field("lineage", description="Graph (key) name inside the embedded store.")
    batch_size: int = Field(5000, ge=1, le=100_000, description="Rows per UNWIND write batch.")

    @field_validator("password")
    @classmethod
    def _password_given(cls, password: SecretStr | None) -> SecretStr | None:
        """Every command reads [graph], so its secret is checked as it is loaded."""
        no_empty_secret("password", password)
        return password

    @field_validator("uri")
    @classmethod
    def _known_scheme(cls, uri: str | None) -> str | None:
        if uri in (None, ""):
            return None
        schemes = ("bolt://", "bolt+s://", "bolt+ssc://", "neo4j://", "neo4j+s://", "neo4j+ssc://")
        if not uri.startswith(schemes):
            raise ValueError(f"must start with one of {', '.join(schemes)} (got {redact(uri)!r})")
        query = uri.partition("?")[2]
        keys = [item.partition("=")[0] for item in re.split("[&;]", query) if item]
        if "@" in uri.partition("://")[2].partition("/")[0].partition("?")[0] or any(
            _CREDENTIAL_KEY.fullmatch(key) for key in keys
        ):
            raise ValueError(
                f"must not carry a user or password (got {redact(uri)!r}); set [graph] user "
                "and password (LINEAGEGRAPH_GRAPH__PASSWORD) instead"
            )
        if query and uri.startswith("bolt"):
            raise ValueError(
                f"a bolt:// URI takes no query string (got {redact(uri)!r}); a routing "
                "context (?key=value) needs neo4j://"
            )
        return uri

    def __repr_args__(self) -> Iterator[tuple[str | None, Any]]:
        """The fields as repr shows them: the URI as `location` masks it."""
        for name, value in super().__repr_args__():
            yield name, redact(value) if name == "uri" and value else value

    @property
    def location(self) -> str:
        """Where the store is, as printed and as its harvest lock is named: the URI with any
        query values masked, or the embedded store's data directory."""
        return redact(self.uri) if self.uri else str(self.data_dir)
