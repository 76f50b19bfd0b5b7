// The assets each of these jobs reads or writes: one hop of the Marquez-compatible lineage
// graph, from jobs to datasets. Deleted assets are left out unless include_deleted.
// Params: urns (list of transformation urns), include_deleted (bool), as_of.
// As of a time (as_of, epoch ms; null: now) only the edges that held then count
// (docs/history.md); include_deleted counts those that had stopped too.
UNWIND $urns AS u
MATCH (t:Transformation {urn: u})-[r:READS_FROM|WRITES_TO]->(a:Asset)
WITH t, r, a
WHERE ($include_deleted OR a.deleted_at IS NULL OR a.deleted_at > $as_of)
  AND CASE WHEN $as_of IS NULL THEN $include_deleted OR r.retired_at IS NULL
           ELSE r.first_seen <= $as_of
                AND ($include_deleted
                     OR size([s IN coalesce(r.stopped, []) WHERE s <= $as_of])
                        = size([s IN coalesce(r.resumed, []) WHERE s <= $as_of])) END
RETURN t.urn AS job, a.urn AS asset, type(r) AS rel
