"""Fixtures of the serve tests (kept in serve_fixtures)."""

from serve_fixtures import server  # noqa: F401  (fixtures are found by name)
