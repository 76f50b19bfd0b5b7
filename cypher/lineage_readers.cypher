// The transformations that read any of these assets: what an impact analysis says would be
// affected, with what each writes (none: a read-only query such as a dashboard's); `upstream`
// asks for the direct S3 readers only.
// Params: urns (list of asset urns), systems (list: only transformations of these systems;
// empty for all), as_of (epoch ms or null: now): the reads and writes that held then
// (docs/history.md).
UNWIND $urns AS u
MATCH (t:Transformation)-[r:READS_FROM]->(a:Asset {urn: u})
WHERE (size($systems) = 0 OR t.system IN $systems)
  AND CASE WHEN $as_of IS NULL THEN r.retired_at IS NULL
           ELSE r.first_seen <= $as_of
                AND size([s IN coalesce(r.stopped, []) WHERE s <= $as_of])
                    = size([s IN coalesce(r.resumed, []) WHERE s <= $as_of]) END
WITH t, collect(DISTINCT a.urn) AS reads
OPTIONAL MATCH (t)-[o:WRITES_TO]->(w:Asset)
WHERE CASE WHEN $as_of IS NULL THEN o.retired_at IS NULL
           ELSE o.first_seen <= $as_of
                AND size([s IN coalesce(o.stopped, []) WHERE s <= $as_of])
                    = size([s IN coalesce(o.resumed, []) WHERE s <= $as_of]) END
WITH t, reads, collect(DISTINCT w.urn) AS writes
RETURN t.urn AS urn, t.name AS name, t.system AS system, t.user AS user, t.runs AS runs,
       t.last_run_at AS last_run_at, reads, writes
ORDER BY system, urn
