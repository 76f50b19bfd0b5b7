// Every schema version of each present asset that something reads now (a FLOWS_TO out, a job's
// READS_FROM, a FEEDS out of one of its columns; retired edges, docs/history.md, do not count)
// and that has a version reported at or after $since: the schema-change alert rule compares
// each with the one before. Only the few assets with a recent version are counted.
// Params: since.
MATCH (a:Asset)-[:HAS_SCHEMA]->(v:SchemaVersion)
WHERE v.at >= $since AND a.deleted_at IS NULL
WITH DISTINCT a
OPTIONAL MATCH (a)-[o:FLOWS_TO]->()
WHERE o.retired_at IS NULL
WITH a, count(o) AS flows
OPTIONAL MATCH (a)<-[r:READS_FROM]-()
WHERE r.retired_at IS NULL
WITH a, flows, count(r) AS reads
OPTIONAL MATCH (a)<-[:COLUMN_OF]-(:Column)-[f:FEEDS]->()
WHERE f.retired_at IS NULL
WITH a, flows, reads, count(f) AS feeds
WHERE flows + reads + feeds > 0
MATCH (a)-[:HAS_SCHEMA]->(s:SchemaVersion)
RETURN a.urn AS asset, s.source AS source, s.at AS at, s.last_seen AS last, s.hash AS hash,
       s.fields AS fields
ORDER BY asset, source, at
