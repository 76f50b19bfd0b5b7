// How many assets present one OpenLineage namespace holds (Marquez's totalCount); the same
// test as serve_namespace_assets.cypher. Params: root, prefix (strings).
MATCH (a:Asset)
WHERE a.deleted_at IS NULL AND (a.urn = $root OR a.urn STARTS WITH $prefix)
RETURN count(a) AS total
