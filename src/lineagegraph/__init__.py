"""lineagegraph: one lineage graph for S3, Spark and Snowflake.

The Python API (lineagegraph.api) is importable from here: `lineagegraph.open_store`,
`lineagegraph.harvest_all`, `lineagegraph.upstream`, ... Each name is imported on first use,
so `import lineagegraph` alone costs nothing (the Spark listener imports it in the driver).
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from importlib.util import find_spec
from typing import TYPE_CHECKING, Any

try:
    __version__ = version("lineagegraph")
except PackageNotFoundError:  # running from a source tree without an install
    __version__ = "0.0.0+source"

if TYPE_CHECKING:
    from lineagegraph.api import *  # noqa: F403


def __getattr__(name: str) -> Any:
    # A submodule not imported yet (`from lineagegraph import questions`) is the import
    # system's to load: answer before importing the API, which imports submodules itself.
    if name.startswith("_") or find_spec(f"{__name__}.{name}") is not None:
        raise AttributeError(name)
    from lineagegraph import api

    if name in api.__all__:
        return getattr(api, name)
    raise AttributeError(f"module 'lineagegraph' has no attribute {name!r}")


def __dir__() -> list[str]:
    from lineagegraph import api

    return sorted([*globals(), *api.__all__])
