// One page of Marquez's dataset listing: the assets present in one OpenLineage namespace (the
// urn is the namespace's root, or starts with its prefix), by urn, with what
// lineagegraph.serve.marquez shows of them (the columns of serve_assets.cypher).
// Params: root, prefix (strings), skip, limit (integers).
MATCH (a:Asset)
WHERE a.deleted_at IS NULL AND (a.urn = $root OR a.urn STARTS WITH $prefix)
RETURN a.urn AS urn, a.name AS name, a.system AS system,
       CASE WHEN a:Table THEN 'Table' WHEN a:Dataset THEN 'Dataset' WHEN a:File THEN 'File'
            ELSE 'Asset' END AS kind,
       a.first_seen AS first_seen, a.last_seen AS last_seen, a.deleted_at AS deleted_at
ORDER BY urn
SKIP $skip
LIMIT $limit
