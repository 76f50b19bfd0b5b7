// The schema versions the graph holds of these assets as these sources report them, for the
// writer to fold new sightings into. Params: keys (list of {asset, source}).
UNWIND $keys AS k
MATCH (:Asset {urn: k.asset})-[:HAS_SCHEMA]->(v:SchemaVersion)
WHERE v.source = k.source
RETURN k.asset AS asset, k.source AS source, v.at AS at, v.last_seen AS last, v.hash AS hash,
       v.fields AS fields
