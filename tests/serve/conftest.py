"""Fixtures of the serve tests (kept in serve_fixtures and explorer_fixtures)."""

from explorer_fixtures import explorer_server  # noqa: F401  (fixtures are found by name)
from serve_fixtures import server  # noqa: F401
