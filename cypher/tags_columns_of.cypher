// The columns of the given assets: a column's tag reaches its asset's downstream assets
// where no column lineage exists, so a slice behind an asset holds them.
// Params: urns (list of asset urns).
UNWIND $urns AS u
MATCH (c:Column)-[:COLUMN_OF]->(:Asset {urn: u})
RETURN u AS asset, c.urn AS column
