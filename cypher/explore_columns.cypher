// The columns of the assets on an explorer picture, for its column view (which orders them;
// the FEEDS edges between them come from lineage_column_downstream_step).
// Params: assets (list of asset urns).
UNWIND $assets AS u
MATCH (c:Column)-[:COLUMN_OF]->(:Asset {urn: u})
RETURN u AS asset, c.urn AS urn, c.name AS name
