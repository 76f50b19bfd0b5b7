// The classifications one source states now (not withdrawn) on the assets and columns under an
// urn prefix, so a harvest that reads its source's tags whole can tell which went away and
// restate only what changed. Params: source, prefix.
MATCH (g:Tag)
WHERE g.source = $source AND g.target STARTS WITH $prefix AND g.removed_at IS NULL
RETURN g.target AS target, g.key AS key, g.value AS value
