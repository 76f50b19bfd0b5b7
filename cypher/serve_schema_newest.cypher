// The newest schema version of each of these assets, whichever source reported it: the types
// of a Marquez Dataset's fields and its currentVersion. Params: urns (list of asset urns).
UNWIND $urns AS u
MATCH (:Asset {urn: u})-[:HAS_SCHEMA]->(v:SchemaVersion)
WITH u, v
ORDER BY v.at DESC, v.source
WITH u, collect(v)[0] AS newest
RETURN u AS urn, newest.source AS source, newest.at AS at, newest.fields AS fields
