// The transformations whose urn starts with one of these prefixes, for Marquez's job listing
// (lineagegraph.serve.listings keeps those whose job namespace is exactly the one asked for).
// Params: prefixes (list of strings).
UNWIND $prefixes AS prefix
MATCH (t:Transformation)
WHERE t.urn STARTS WITH prefix
RETURN DISTINCT t.urn AS urn, t.name AS name
ORDER BY urn
