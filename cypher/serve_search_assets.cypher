// Marquez's search over datasets: assets present whose urn holds the needle, case-insensitively.
// Params: needle (lower-case string), limit.
MATCH (a:Asset)
WHERE a.deleted_at IS NULL AND toLower(a.urn) CONTAINS $needle
RETURN a.urn AS urn, a.last_seen AS last_seen
ORDER BY urn
LIMIT $limit
