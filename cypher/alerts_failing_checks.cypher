// Checks whose latest result is one of $statuses (fail, error) on present assets or their
// columns: the quality alert rule. Params: statuses (list).
MATCH (c:Check)-[:CHECKS]->(t)
WHERE c.status IN $statuses
OPTIONAL MATCH (t)-[:COLUMN_OF]->(owner:Asset)
WITH c, t, coalesce(owner, t) AS a
WHERE a.deleted_at IS NULL
RETURN a.urn AS asset, a.name AS name, a.system AS system, t.urn AS target, c.urn AS urn,
       c.name AS check, c.status AS status, c.failures AS failures, c.at AS at
ORDER BY asset, urn
