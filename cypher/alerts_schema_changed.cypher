// Every schema version of each present asset that something reads (a FLOWS_TO out, a job's
// READS_FROM, a FEEDS out of one of its columns) and that has a version reported at or after
// $since: the schema-change alert rule compares each with the one before. Params: since.
MATCH (a:Asset)-[:HAS_SCHEMA]->(v:SchemaVersion)
WHERE v.at >= $since AND a.deleted_at IS NULL
  AND ((a)-[:FLOWS_TO]->() OR (a)<-[:READS_FROM]-() OR (a)<-[:COLUMN_OF]-(:Column)-[:FEEDS]->())
WITH DISTINCT a
MATCH (a)-[:HAS_SCHEMA]->(s:SchemaVersion)
RETURN a.urn AS asset, s.source AS source, s.at AS at, s.last_seen AS last, s.hash AS hash,
       s.fields AS fields
ORDER BY asset, source, at
