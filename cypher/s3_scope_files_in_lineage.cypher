// The objects of a complete scan's scope (bucket + key prefix) that lineage names directly (a job
// or event reading or writing one object, a COPY of one file: a FLOWS_TO, READS_FROM or
// WRITES_TO on the :File, holding or not), present and not seen by the scan: they are deleted as
// of the scan with their lineage (lineagegraph.graph.history.delete_assets) before the scope's
// soft delete. Params: root (`s3://bucket/prefix`: an object's urn is `s3://bucket/key`),
// started (the scan's start, epoch ms).
MATCH (f:File)-[:FLOWS_TO|READS_FROM|WRITES_TO]-()
WHERE f.urn STARTS WITH $root AND f.deleted_at IS NULL
  AND f.last_seen < $started
RETURN DISTINCT f.urn AS urn
