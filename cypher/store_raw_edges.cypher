// Embedded store only (see store_raw_nodes): the properties of the relationships leaving nodes
// with ids in [$from, $to).
MATCH (a)-[e]->()
WHERE id(a) >= $from AND id(a) < $to
RETURN id(a) AS node, id(e) AS id, properties(e) AS props
