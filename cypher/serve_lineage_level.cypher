// One job level of the Marquez-compatible lineage graph (lineagegraph.serve.marquez) in one
// round trip: the jobs not yet seen that read or write the frontier's assets, and every asset
// each of those jobs reads or writes. Deleted assets are left out unless include_deleted, but
// a frontier asset always comes back (a deleted start keeps its edges, as it is in the answer).
// Only the previous level's jobs can touch the frontier besides new ones (an older job's
// assets came back at its own level), so `jobs` stays small. The filter on them follows WITH
// DISTINCT so that the plan starts from the urn index, not a scan of every job.
// Params: urns (frontier asset urns), jobs (the previous level's job urns), include_deleted.
UNWIND $urns AS u
MATCH (:Asset {urn: u})<-[:READS_FROM|WRITES_TO]-(t:Transformation)
WITH DISTINCT t
WHERE NOT t.urn IN $jobs
MATCH (t)-[r:READS_FROM|WRITES_TO]->(a:Asset)
WHERE $include_deleted OR a.deleted_at IS NULL OR a.urn IN $urns
RETURN t.urn AS job, a.urn AS asset, type(r) AS rel
