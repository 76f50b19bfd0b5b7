// Datasets that lineage named (a Spark read of one file path) before a harvest saw them to be
// objects become the :File nodes they are, keeping their lineage edges; s3_merge_files then
// gives them their object's properties (last_seen goes back to 0: lineage saw a path, not the
// object, so the harvest's sighting is the newer one). A dataset that holds objects or
// roll-ups stays one.
// Params: urns (objects an inventory holds, from s3_scope_read_objects).
UNWIND $urns AS urn
MATCH (n:Asset:Dataset {urn: urn})
OPTIONAL MATCH (part)-[:PART_OF|ROLLUP_OF]->(n)
WITH n, count(part) AS parts
WHERE parts = 0
REMOVE n:Dataset
SET n:File, n.last_seen = 0
RETURN count(n) AS objects
