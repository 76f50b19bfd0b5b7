// Whether the graph holds any classification fact in force: without one (and without
// [[tags.globs]] in settings) nothing carries a tag, and lineage answers skip deriving.
// Params: none.
MATCH (g:Tag)
WHERE g.removed_at IS NULL
RETURN g.urn AS urn
LIMIT 1
