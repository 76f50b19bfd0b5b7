// The datasets holding an object (present or not) of a scope: bucket + key prefix, so that
// their rollups can be recomputed after a scan. Params: bucket, prefix.
MATCH (f:File)-[:PART_OF]->(d:Dataset)
WHERE f.bucket = $bucket AND f.key STARTS WITH $prefix
RETURN DISTINCT d.urn AS dataset
