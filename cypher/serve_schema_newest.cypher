// The newest schema version of each of these assets (reported at or before $as_of, unless
// null), whichever source reported it: the types of a Marquez Dataset's fields and its
// currentVersion. Params: urns (list of asset urns), as_of (epoch ms or null).
UNWIND $urns AS u
MATCH (:Asset {urn: u})-[:HAS_SCHEMA]->(v:SchemaVersion)
WHERE $as_of IS NULL OR v.at <= $as_of
WITH u, v
ORDER BY v.at DESC, v.source
WITH u, collect(v)[0] AS newest
RETURN u AS urn, newest.source AS source, newest.at AS at, newest.fields AS fields
