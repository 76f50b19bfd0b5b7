// Embedded store only (lineagegraph.graph.falkordb, re-encoding a store written before strings
// had a stored form): the properties of nodes with ids in [$from, $to).
MATCH (n)
WHERE id(n) >= $from AND id(n) < $to
RETURN id(n) AS id, properties(n) AS props
