// Of the datasets a complete scan emptied (s3_scope_vanished), those that lineage runs through
// (a FLOWS_TO, READS_FROM or WRITES_TO, holding or not), still present and not seen since the
// scan started: they are deleted as of the scan and their lineage stops with them
// (lineagegraph.graph.history.delete_assets). Params: urns (dataset urns), started (epoch ms).
UNWIND $urns AS urn
MATCH (d:Asset:Dataset {urn: urn})-[:FLOWS_TO|READS_FROM|WRITES_TO]-()
WHERE d.deleted_at IS NULL AND d.last_seen <= $started
RETURN DISTINCT d.urn AS urn
