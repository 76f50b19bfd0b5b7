// The column names of an asset, to suggest the right one when a typed column is unknown.
// Params: asset (asset urn), limit.
MATCH (c:Column)-[:COLUMN_OF]->(a:Asset {urn: $asset})
RETURN c.name AS name
ORDER BY name
LIMIT $limit
