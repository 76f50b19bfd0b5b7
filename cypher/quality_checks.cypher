// The checks of these assets, on the asset itself or on one of its columns, with their latest
// results: what an asset's quality and `lineagegraph check` are computed from.
// Params: urns (list of asset urns).
UNWIND $urns AS u
MATCH (a:Asset {urn: u})<-[:CHECKS]-(c:Check)
RETURN a.urn AS asset, a.urn AS target, c.urn AS urn, c.system AS system, c.name AS name,
       c.status AS status, c.failures AS failures, c.at AS at, c.run_id AS run_id
UNION ALL
UNWIND $urns AS u
MATCH (a:Asset {urn: u})<-[:COLUMN_OF]-(t:Column)<-[:CHECKS]-(c:Check)
RETURN a.urn AS asset, t.urn AS target, c.urn AS urn, c.system AS system, c.name AS name,
       c.status AS status, c.failures AS failures, c.at AS at, c.run_id AS run_id
