// Marquez's search over jobs: transformations whose urn holds the needle, case-insensitively.
// Params: needle (lower-case string), limit.
MATCH (t:Transformation)
WHERE toLower(t.urn) CONTAINS $needle
RETURN t.urn AS urn, t.name AS name, t.last_seen AS last_seen
ORDER BY urn
LIMIT $limit
