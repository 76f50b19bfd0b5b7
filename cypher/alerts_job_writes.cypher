// The present assets each of these jobs still writes (the WRITES_TO not retired): where a run alert's blast radius starts.
// Params: jobs (list of transformation urns).
UNWIND $jobs AS j
MATCH (t:Transformation {urn: j})-[w:WRITES_TO]->(a:Asset)
WHERE a.deleted_at IS NULL AND w.retired_at IS NULL
RETURN t.urn AS job, collect(a.urn) AS writes
