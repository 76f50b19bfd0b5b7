// The schema versions of these assets reported by a time, each source's oldest first: which
// columns each source had dropped then (lineagegraph.questions.schemas.dropped_columns, for the
// explorer's column view). Params: assets (list of asset urns), as_of (epoch ms; null: now).
UNWIND $assets AS u
MATCH (:Asset {urn: u})-[:HAS_SCHEMA]->(v:SchemaVersion)
WHERE $as_of IS NULL OR v.at <= $as_of
RETURN u AS asset, v.source AS source, v.at AS at, v.last_seen AS last, v.hash AS hash,
       v.fields AS fields
ORDER BY asset, source, at
