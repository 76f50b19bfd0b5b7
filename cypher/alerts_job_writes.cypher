// The present assets each of these jobs writes: where a run alert's blast radius starts.
// Params: jobs (list of transformation urns).
UNWIND $jobs AS j
MATCH (t:Transformation {urn: j})-[:WRITES_TO]->(a:Asset)
WHERE a.deleted_at IS NULL
RETURN t.urn AS job, collect(a.urn) AS writes
