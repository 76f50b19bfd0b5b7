// Spark details of a transformation's newest run. Rows: {urn, run_at, mode, command}.
// Runs after merge_transformations; an older run (a replayed spool) does not overwrite them.
UNWIND $rows AS r
MATCH (t:Transformation {urn: r.urn})
WHERE r.run_at >= t.last_run_at
SET t.write_mode = r.mode, t.spark_command = r.command
