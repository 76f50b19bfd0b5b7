// One job level of the Marquez-compatible lineage graph (lineagegraph.serve.marquez) in one
// round trip: the jobs not yet seen that read or write the frontier's assets, and every asset
// each of those jobs reads or writes. Deleted assets are left out unless include_deleted, but
// a frontier asset always comes back (a deleted start keeps its edges, as it is in the answer).
// Only the previous level's jobs can touch the frontier besides new ones (an older job's
// assets came back at its own level), so `jobs` stays small. The filter on them follows WITH
// DISTINCT so that the plan starts from the urn index, not a scan of every job.
// Params: urns (frontier asset urns), jobs (the previous level's job urns), include_deleted,
// as_of.
// As of a time (as_of, epoch ms; null: now) only the edges that held then count
// (docs/history.md); include_deleted counts those that had stopped too.
UNWIND $urns AS u
MATCH (:Asset {urn: u})<-[e:READS_FROM|WRITES_TO]-(t:Transformation)
WHERE CASE WHEN $as_of IS NULL THEN $include_deleted OR e.retired_at IS NULL
           ELSE e.first_seen <= $as_of
                AND ($include_deleted
                     OR size([s IN coalesce(e.stopped, []) WHERE s <= $as_of])
                        = size([s IN coalesce(e.resumed, []) WHERE s <= $as_of])) END
WITH DISTINCT t
WHERE NOT t.urn IN $jobs
MATCH (t)-[r:READS_FROM|WRITES_TO]->(a:Asset)
WHERE ($include_deleted OR a.deleted_at IS NULL OR a.deleted_at > $as_of OR a.urn IN $urns)
  AND CASE WHEN $as_of IS NULL THEN $include_deleted OR r.retired_at IS NULL
           ELSE r.first_seen <= $as_of
                AND ($include_deleted
                     OR size([s IN coalesce(r.stopped, []) WHERE s <= $as_of])
                        = size([s IN coalesce(r.resumed, []) WHERE s <= $as_of])) END
RETURN t.urn AS job, a.urn AS asset, type(r) AS rel
