// Embedded store only (see store_raw_nodes): properties set again by relationship id (found
// from its start node). Rows: {node, id, props}.
UNWIND $rows AS r
MATCH (a)-[e]->()
WHERE id(a) = r.node AND id(e) = r.id
SET e += r.props
