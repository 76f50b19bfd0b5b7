// The objects of a complete scan's scope (bucket + key prefix) that lineage names directly (a job
// or event reading or writing one object, a COPY of one file: a FLOWS_TO, READS_FROM or
// WRITES_TO on the :File, holding or not), present and not seen by the scan: they are deleted as
// of the scan with their lineage (lineagegraph.graph.history.delete_assets) before the scope's
// soft delete. Params: root (`s3://bucket/prefix`: an object's urn is `s3://bucket/key`),
// started (the scan's start, epoch ms).
// READS_FROM and WRITES_TO are followed from the transformations (the WITH keeps FalkorDB from
// starting at the far more numerous files: 0.01 s instead of 1.1 s of server CPU for 200,000
// objects all unseen); FLOWS_TO, whose other end is any asset, from the unseen objects.
MATCH (t:Transformation)
WITH t
MATCH (t)-[:READS_FROM|WRITES_TO]->(f:File)
WHERE f.urn STARTS WITH $root AND f.deleted_at IS NULL
  AND f.last_seen < $started
RETURN f.urn AS urn
UNION
MATCH (f:File)-[:FLOWS_TO]-()
WHERE f.urn STARTS WITH $root AND f.deleted_at IS NULL
  AND f.last_seen < $started
RETURN f.urn AS urn
