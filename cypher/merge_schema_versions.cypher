// (:Asset)-[:HAS_SCHEMA]->(:SchemaVersion): every schema version of an asset as one source
// reports it, replacing the ones held (the writer merged them: lineagegraph.schemas). Rows:
// {asset, source, versions: [{urn, at, last, hash, fields}], keep: the versions' urns}. A
// version's urn is its asset, source and time; `fields` a JSON list of [column, type].
// Returns the rows written: an asset not in the graph writes nothing.
UNWIND $rows AS r
MATCH (a:Asset {urn: r.asset})
OPTIONAL MATCH (a)-[:HAS_SCHEMA]->(old:SchemaVersion)
WHERE old.source = r.source AND NOT old.urn IN r.keep
DETACH DELETE old
WITH DISTINCT a, r
UNWIND r.versions AS v
MERGE (s:SchemaVersion {urn: v.urn})
ON CREATE SET s.source = r.source, s.asset = r.asset
SET s.at = v.at, s.last_seen = v.last, s.hash = v.hash, s.fields = v.fields
MERGE (a)-[:HAS_SCHEMA]->(s)
WITH DISTINCT r
RETURN count(*) AS written
