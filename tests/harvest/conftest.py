"""Fixtures of the harvester tests. Each source keeps its own in a module of its own and is
imported here (S3: s3_fixtures)."""

from s3_fixtures import (  # noqa: F401  (fixtures are found by name)
    bucket,
    fault_proxy,
    moto,
    moto_endpoint,
    rgw,
    rgw_endpoint,
    spark,
)
