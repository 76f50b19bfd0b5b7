// The transformations that read or write one asset, with their runs: the explorer's asset page.
// Params: urn.
MATCH (a:Asset {urn: $urn})<-[r:READS_FROM|WRITES_TO]-(t:Transformation)
RETURN t.urn AS urn, t.name AS name, t.system AS system, type(r) AS rel, t.runs AS runs,
       t.last_run_at AS last_run_at, t.last_run_id AS last_run_id, t.user AS user
ORDER BY rel DESC, urn
