"""The Snowflake harvester: ACCOUNT_USAGE.ACCESS_HISTORY (with QUERY_HISTORY, OBJECT_DEPENDENCIES
and stage URLs) to lineage. queries.py holds the SQL, access_history.py turns a row into model
values, stages.py is the S3 bridge, harvester.py runs it all (repeats collapse in the reducer
every harvester shares, lineagegraph/harvest/reducer.py)."""
