// Whether the graph holds any check at all: without one every asset's quality is unknown, and
// answers skip looking (a traversal's details then cost what they did before checks existed).
MATCH (c:Check)
RETURN c.urn AS urn
LIMIT 1
