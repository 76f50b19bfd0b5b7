// Every classification fact in force (removed_at null), blocks included (source 'block'),
// with the urn of what it is on and, for a column, its asset: where derivation starts.
// Params: none. lineagegraph.questions.tags derives tags from these along lineage.
MATCH (g:Tag)-[:TAGS]->(t)
OPTIONAL MATCH (t)-[:COLUMN_OF]->(a:Asset)
WITH g, t, a
WHERE g.removed_at IS NULL
RETURN g.urn AS urn, t.urn AS target, a.urn AS asset, g.key AS key, g.value AS value,
       g.source AS source, g.by AS by, g.at AS at, g.reason AS reason
