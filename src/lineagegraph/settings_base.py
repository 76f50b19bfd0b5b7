"""What every settings section shares, below all of them: the `Section` base (unknown keys fail,
empty secrets are refused when a command uses the section), URL and host rules, and the masking of
secrets in what is printed. Each source declares its own section beside its code (harvest/s3/
settings.py, spark/settings.py, ...); lineagegraph.settings composes them and loads them."""

from __future__ import annotations

import ipaddress
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, SecretStr

ENV_PREFIX = "LINEAGEGRAPH_"
CONFIG_ENV = "LINEAGEGRAPH_CONFIG"
TEST_ENV_PREFIX = "LINEAGEGRAPH_TEST_"  # the test suite's own switches, e.g. _TEST_RGW


class Section(BaseModel):
    """A settings section: unknown keys are typos and fail loudly."""

    model_config = ConfigDict(extra="forbid")

    def check(self) -> None:
        """Rules across fields, checked only when a command uses the section (`with_overrides`),
        so that a half-configured source does not stop commands that never touch it.

        A secret set to nothing (`TOKEN=`, `token = ""`, `--token ""`) is a mistake, never "no
        secret": an empty token would let `Authorization: Bearer` with nothing after it in, and
        an empty password fail later and less clearly. Subclasses call this first."""
        for name, value in self:
            no_empty_secret(name, value)


def no_empty_secret(name: str, value: Any) -> None:
    """Refuse a secret given as nothing (see `Section.check`)."""
    if isinstance(value, SecretStr) and not value.get_secret_value().strip():
        raise ValueError(f"{name} is empty; give a real value or leave the setting unset")


def http_url(url: str | None) -> str | None:
    """An http(s) URL setting: empty is unset, anything else must be http:// or https://."""
    if url in (None, ""):
        return None
    if not url.startswith(("http://", "https://")) or len(url.split("://", 1)[1]) == 0:
        raise ValueError(f"must be an http:// or https:// URL (got {redact(url)!r})")
    return url


def is_loopback(host: str) -> bool:
    """127.0.0.0/8, ::1 and 'localhost'; anything else (0.0.0.0, a name) may reach others."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


# A password in a URI's userinfo may hold `/` (unencoded secret keys do), never `?` or `#`.
_USERINFO = re.compile(r"(?P<head>[A-Za-z][A-Za-z0-9+.-]*://[^:/@\s?#]*):[^@\s?#]*@")
_URI = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>`]*")
_QUERY_PARTS = re.compile(r"([&;])")


def redact(text: str, secrets: list[str] | tuple[str, ...] = ()) -> str:
    """`text` with URI passwords (`user:***@`), the values of URI query strings
    (`?password=***`: a driver may take credentials there) and the given secret values
    masked."""
    text = _URI.sub(_masked_query, _USERINFO.sub(r"\g<head>:***@", text))
    for secret in sorted(secrets, key=len, reverse=True):
        text = text.replace(secret, "***")
    return text


def _masked_query(match: re.Match[str]) -> str:
    """One URI with every value after its `?` masked (`?a=***&b=***`); keys stay, to read."""
    head, mark, query = match.group(0).partition("?")
    if not mark:
        return head
    parts = _QUERY_PARTS.split(query)
    masked = [
        p if p in "&;" else p.partition("=")[0] + "=***" if "=" in p else "***" for p in parts
    ]
    return f"{head}?{''.join(masked)}"


def secret_values(model: BaseModel) -> list[str]:
    """Every non-empty SecretStr value in a settings tree, to mask wherever it might leak."""
    found: list[str] = []
    for name in type(model).model_fields:
        value = getattr(model, name)
        if isinstance(value, SecretStr) and value.get_secret_value():
            found.append(value.get_secret_value())
        elif isinstance(value, dict):  # a table of secrets, e.g. [kafka] client_secrets
            found += [
                v.get_secret_value()
                for v in value.values()
                if isinstance(v, SecretStr) and v.get_secret_value()
            ]
        elif isinstance(value, BaseModel):
            found += secret_values(value)
    return found
