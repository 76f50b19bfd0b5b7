// The transformations that read any of these assets: what an impact analysis says would be
// affected, with what each writes (none: a read-only query such as a dashboard's); `upstream`
// asks for the direct S3 readers only.
// Params: urns (list of asset urns), systems (list: only transformations of these systems;
// empty for all).
UNWIND $urns AS u
MATCH (t:Transformation)-[:READS_FROM]->(a:Asset {urn: u})
WHERE size($systems) = 0 OR t.system IN $systems
WITH t, collect(DISTINCT a.urn) AS reads
OPTIONAL MATCH (t)-[:WRITES_TO]->(w:Asset)
WITH t, reads, collect(DISTINCT w.urn) AS writes
RETURN t.urn AS urn, t.name AS name, t.system AS system, t.user AS user, t.runs AS runs,
       t.last_run_at AS last_run_at, reads, writes
ORDER BY system, urn
