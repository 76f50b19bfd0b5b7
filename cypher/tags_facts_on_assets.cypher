// The classification facts in force on the given assets (blocks included).
// Params: urns (list of asset urns).
UNWIND $urns AS u
MATCH (g:Tag)-[:TAGS]->(t:Asset {urn: u})
WITH g, t
WHERE g.removed_at IS NULL
RETURN g.urn AS urn, t.urn AS target, g.key AS key, g.value AS value,
       g.source AS source, g.by AS by, g.at AS at, g.reason AS reason
