// Embedded store only (see store_raw_nodes): properties set again by node id. Rows: {id, props}.
UNWIND $rows AS r
MATCH (n)
WHERE id(n) = r.id
SET n += r.props
