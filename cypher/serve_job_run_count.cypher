// How many OpenLineage runs (:Run) a job has, and its last run as every source records it
// (Spark, dbt, Snowflake and S3 access logs keep no :Run), with whether that run is a :Run.
// Params: urn (transformation urn).
MATCH (t:Transformation {urn: $urn})
OPTIONAL MATCH (run:Run)-[:RUN_OF]->(t)
RETURN count(run) AS total, t.last_run_id AS last_run_id, t.last_run_at AS last_run_at,
       sum(CASE WHEN run.id = t.last_run_id THEN 1 ELSE 0 END) AS last_is_run
