// The writes of every present asset (S3 objects aside) as the sources record them, for the
// freshness rule: the jobs writing it (WRITES_TO: Spark, OpenLineage COMPLETE runs, Snowflake
// queries, dbt runs) with their run counts, the FLOWS_TO edges into it with theirs, and the
// present S3 objects of a dataset by last_modified. Each gives the newest and oldest write and
// how many writes lie between; assets that nothing writes are left out.
MATCH (a:Asset)
WHERE a.deleted_at IS NULL AND NOT a:File
OPTIONAL MATCH (t:Transformation)-[w:WRITES_TO]->(a)
WITH a, max(w.last_seen) AS job_last, min(w.first_seen) AS job_first, max(t.runs) AS job_runs
OPTIONAL MATCH ()-[f:FLOWS_TO]->(a)
WITH a, job_last, job_first, job_runs, max(f.last_seen) AS flow_last,
     min(f.first_seen) AS flow_first, max(f.runs) AS flow_runs
OPTIONAL MATCH (o:File)-[:PART_OF]->(a)
WHERE o.deleted_at IS NULL AND o.last_modified IS NOT NULL
WITH a, job_last, job_first, job_runs, flow_last, flow_first, flow_runs,
     max(o.last_modified) AS object_last, min(o.last_modified) AS object_first,
     count(o) AS objects
WHERE job_last IS NOT NULL OR flow_last IS NOT NULL OR object_last IS NOT NULL
RETURN a.urn AS urn, a.name AS name, a.system AS system, job_last, job_first, job_runs,
       flow_last, flow_first, flow_runs, object_last, object_first, objects
ORDER BY urn
