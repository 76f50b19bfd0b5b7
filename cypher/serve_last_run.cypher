// The jobs whose last recorded run has this id: a run of a source that keeps no :Run (Spark,
// dbt, Snowflake, S3 access logs), for GET /api/v1/jobs/runs/{id}. A scan of the jobs, run
// only when no :Run has the id. Params: id (run id).
MATCH (t:Transformation)
WHERE t.last_run_id = $id
RETURN t.urn AS job, t.name AS name, t.last_run_at AS at
ORDER BY job
LIMIT 1
