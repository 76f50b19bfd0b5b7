// Every transformation's urn, name and times, for Marquez's job namespaces (a job namespace
// may hold '/', so only the urn and the stored name together split it; see identity.py).
MATCH (t:Transformation)
RETURN t.urn AS urn, t.name AS name, t.first_seen AS first_seen, t.last_seen AS last_seen
