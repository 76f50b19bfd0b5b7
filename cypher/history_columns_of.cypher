// The columns of one asset and when each was first seen, for `lineagegraph history`.
// Params: urn (asset urn).
MATCH (c:Column)-[:COLUMN_OF]->(:Asset {urn: $urn})
RETURN c.urn AS urn, c.name AS name, c.first_seen AS first_seen
ORDER BY first_seen, name
