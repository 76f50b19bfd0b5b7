// The label scan `lineagegraph diff` used before the index on SchemaVersion's `at`, as the
// baseline of benchmarks/bench_history_diff.py.
// Every schema version of each asset with a version reported in a window (since, until]:
// `lineagegraph diff` compares each with the one before (docs/history.md). Params: since, until.
MATCH (a:Asset)-[:HAS_SCHEMA]->(v:SchemaVersion)
WHERE v.at > $since AND v.at <= $until
WITH DISTINCT a
MATCH (a)-[:HAS_SCHEMA]->(s:SchemaVersion)
RETURN a.urn AS asset, s.source AS source, s.at AS at, s.last_seen AS last, s.hash AS hash,
       s.fields AS fields
ORDER BY asset, source, at
