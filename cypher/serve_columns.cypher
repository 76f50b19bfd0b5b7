// Columns by urn with their asset, for Marquez's column lineage (a field is named by its
// dataset's OpenLineage namespace and name). Params: urns (list of column urns).
UNWIND $urns AS u
MATCH (c:Column {urn: u})-[:COLUMN_OF]->(a:Asset)
RETURN c.urn AS urn, c.name AS name, a.urn AS asset, a.deleted_at AS deleted_at
