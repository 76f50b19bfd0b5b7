// The objects under `root` (an s3:// urn prefix) that lineage consumes one by one: a Spark read
// of one file path, a flow out of one object. An inventory harvested as roll-ups keeps these as
// :File nodes, so their consumption stays per object. Params: root.
MATCH (f:File)-[:FLOWS_TO]->()
WHERE f.urn STARTS WITH $root
RETURN f.urn AS urn
UNION
MATCH (:Transformation)-[:READS_FROM]->(f:File)
WHERE f.urn STARTS WITH $root
RETURN f.urn AS urn
