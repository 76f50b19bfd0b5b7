// The assets under `root` (an s3:// urn prefix) that lineage consumes one by one: a Spark read
// of one file path, a flow out of one object. An inventory harvested as roll-ups keeps the
// objects among them as :File nodes, so their consumption stays per object. An asset that is
// still a :Dataset was named by lineage before any harvest saw the object. Params: root.
MATCH (f:Asset)-[:FLOWS_TO]->()
WHERE f.urn STARTS WITH $root
RETURN f.urn AS urn, 'File' IN labels(f) AS object
UNION
MATCH (:Transformation)-[:READS_FROM]->(f:Asset)
WHERE f.urn STARTS WITH $root
RETURN f.urn AS urn, 'File' IN labels(f) AS object
