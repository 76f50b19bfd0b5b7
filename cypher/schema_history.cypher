// An asset's schema versions, each source's oldest first: `lineagegraph schema-history`, the
// Marquez dataset versions route. Params: urn.
MATCH (:Asset {urn: $urn})-[:HAS_SCHEMA]->(v:SchemaVersion)
RETURN v.source AS source, v.at AS at, v.last_seen AS last, v.hash AS hash, v.fields AS fields
ORDER BY source, at
