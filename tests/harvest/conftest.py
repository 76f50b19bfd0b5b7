"""Fixtures of the harvester tests. Each source keeps its own in a module of its own and is
imported here (S3: s3_fixtures; Snowflake: snowflake_fixtures; dbt: dbt_fixtures), so each is
defined once: a session fixture defined again in a test module would run again, and fakesnow's
server cannot be started twice in one process."""

from dbt_fixtures import dbt_build, dbt_privacy_build  # noqa: F401  (fixtures are found by name)
from s3_fixtures import (  # noqa: F401  (fixtures are found by name)
    bucket,
    fault_proxy,
    moto,
    moto_endpoint,
    rgw,
    rgw_endpoint,
    spark,
)
from snowflake_fixtures import (  # noqa: F401  (fixtures are found by name)
    account_usage,
    fakesnow_server,
    rejecting_login,
    sf_connection,
)
