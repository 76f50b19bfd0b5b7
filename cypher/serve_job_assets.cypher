// The assets each of these jobs reads or writes: one hop of the Marquez-compatible lineage
// graph, from jobs to datasets. Deleted assets are left out unless include_deleted.
// Params: urns (list of transformation urns), include_deleted (bool).
UNWIND $urns AS u
MATCH (t:Transformation {urn: u})-[r:READS_FROM|WRITES_TO]->(a:Asset)
WITH t, r, a
WHERE $include_deleted OR a.deleted_at IS NULL
RETURN t.urn AS job, a.urn AS asset, type(r) AS rel
