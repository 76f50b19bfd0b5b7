// The present assets whose urn starts with a prefix: the candidates of a [[tags.globs]]
// pattern (its text before the first '*'), matched against the whole glob in Python.
// Params: prefix.
MATCH (a:Asset)
WHERE a.urn STARTS WITH $prefix AND a.deleted_at IS NULL
RETURN a.urn AS urn
