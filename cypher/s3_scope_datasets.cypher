// The datasets holding an object (present or not) of a scope: bucket + key prefix, so that
// their rollups can be recomputed after a scan.
// Params: root (`s3://bucket/prefix`: an object's urn is `s3://bucket/key`).
MATCH (f:File)-[:PART_OF]->(d:Dataset)
WHERE f.urn STARTS WITH $root
RETURN DISTINCT d.urn AS dataset
