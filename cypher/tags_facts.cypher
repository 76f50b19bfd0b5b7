// Every classification fact in force (removed_at null), blocks included (source 'block'),
// with the urn of what it is on: where derivation starts.
// Params: none. lineagegraph.questions.tags derives tags from these along lineage.
MATCH (g:Tag)-[:TAGS]->(t)
WITH g, t
WHERE g.removed_at IS NULL
RETURN g.urn AS urn, t.urn AS target, g.key AS key, g.value AS value,
       g.source AS source, g.by AS by, g.at AS at, g.reason AS reason
