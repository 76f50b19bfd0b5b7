// The writes of present assets by jobs (WRITES_TO: Spark, OpenLineage COMPLETE runs, Snowflake
// queries, dbt runs), for the freshness rule: per asset the newest and oldest write and the
// most runs of a job writing it.
MATCH (t:Transformation)-[w:WRITES_TO]->(a:Asset)
WHERE a.deleted_at IS NULL
RETURN a.urn AS urn, max(w.last_seen) AS last, min(w.first_seen) AS first, max(t.runs) AS writes
