// The transformations that read any of these assets: what an impact analysis says would be
// affected. Params: urns (list of asset urns).
UNWIND $urns AS u
MATCH (t:Transformation)-[:READS_FROM]->(a:Asset {urn: u})
WITH t, collect(DISTINCT a.urn) AS reads
RETURN t.urn AS urn, t.name AS name, t.system AS system, t.user AS user, t.runs AS runs,
       t.last_run_at AS last_run_at, reads
ORDER BY system, urn
