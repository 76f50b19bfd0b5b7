// Columns by urn with the asset each belongs to, whose system and deletion apply to the
// column: the start of a column-lineage question and the details of what it reached.
// `first_seen` (the column's), `deleted` and `restored` (its asset's) say whether it was there
// at a time (docs/history.md). Params: urns (list of column urns).
UNWIND $urns AS u
MATCH (c:Column {urn: u})
OPTIONAL MATCH (c)-[:COLUMN_OF]->(a:Asset)
RETURN c.urn AS urn, c.name AS name, a.system AS system, 'Column' AS kind,
       a.deleted_at AS deleted_at, c.first_seen AS first_seen, a.deleted AS deleted,
       a.restored AS restored
