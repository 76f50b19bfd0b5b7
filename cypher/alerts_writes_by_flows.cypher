// The writes of present assets as lineage into them (FLOWS_TO), for the freshness rule: per
// asset the newest and oldest sighting and the most runs of an edge into it.
MATCH ()-[f:FLOWS_TO]->(a:Asset)
WHERE a.deleted_at IS NULL
RETURN a.urn AS urn, max(f.last_seen) AS last, min(f.first_seen) AS first, max(f.runs) AS writes
