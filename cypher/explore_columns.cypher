// The columns of the assets on an explorer picture, for its column view (which orders them;
// the FEEDS edges between them come from lineage_column_downstream_step): as of a time, those
// first seen by then or with no first sighting kept, as for a column-lineage question's start
// (the ones dropped by then are left out by the schema versions).
// Params: assets (list of asset urns), as_of (epoch ms; null: now).
UNWIND $assets AS u
MATCH (c:Column)-[:COLUMN_OF]->(:Asset {urn: u})
WHERE $as_of IS NULL OR c.first_seen IS NULL OR c.first_seen <= $as_of
RETURN u AS asset, c.urn AS urn, c.name AS name
