// The classification facts in force on the given columns (blocks included): the tags a
// slice of the graph starts from.
// Params: urns (list of column urns).
UNWIND $urns AS u
MATCH (g:Tag)-[:TAGS]->(t:Column {urn: u})
WITH g, t
WHERE g.removed_at IS NULL
RETURN g.urn AS urn, t.urn AS target, g.key AS key, g.value AS value,
       g.source AS source, g.by AS by, g.at AS at, g.reason AS reason
