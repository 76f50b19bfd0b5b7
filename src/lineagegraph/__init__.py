"""lineagegraph: one lineage graph for S3, Spark and Snowflake."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("lineagegraph")
except PackageNotFoundError:  # running from a source tree without an install
    __version__ = "0.0.0+source"
