// Every schema version of each asset with a version reported in a window (since, until]:
// `lineagegraph diff` compares each with the one before (docs/history.md). The versions in the
// window come from the range index on `at`. Params: since, until.
MATCH (v:SchemaVersion)
WHERE v.at > $since AND v.at <= $until
MATCH (a:Asset)-[:HAS_SCHEMA]->(v)
WITH DISTINCT a
MATCH (a)-[:HAS_SCHEMA]->(s:SchemaVersion)
RETURN a.urn AS asset, s.source AS source, s.at AS at, s.last_seen AS last, s.hash AS hash,
       s.fields AS fields
ORDER BY asset, source, at
