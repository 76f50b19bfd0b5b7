// A classification fact: (:Tag)-[:TAGS]->(target), the :Asset or :Column it is stated on.
// Rows: {urn, target, key, value, source, by, at, reason, removed}; urn is the JSON list
// [source, key, target], so each source states a key once per target. A newer statement
// replaces the value, who and reason, and a newer removal sets removed_at (a later statement
// clears it); an older or replayed one changes nothing but first_seen.
// Returns the rows written: one whose target is not in the graph is left out (the writer
// writes it again at the end of the run, then counts it as dropped).
UNWIND $rows AS r
OPTIONAL MATCH (asset:Asset {urn: r.target})
OPTIONAL MATCH (column:Column {urn: r.target})
WITH r, coalesce(asset, column) AS t
WHERE t IS NOT NULL
MERGE (g:Tag {urn: r.urn})
ON CREATE SET g.key = r.key, g.source = r.source, g.target = r.target, g.first_seen = r.at,
              g.at = -1
WITH g, t, r, r.at >= g.at AS newer
SET g.value = CASE WHEN newer THEN r.value ELSE g.value END,
    g.by = CASE WHEN newer THEN r.by ELSE g.by END,
    g.reason = CASE WHEN newer THEN r.reason ELSE g.reason END,
    g.first_seen = CASE WHEN r.at < g.first_seen THEN r.at ELSE g.first_seen END,
    g.removed_at = CASE WHEN NOT newer THEN g.removed_at WHEN r.removed THEN r.at ELSE null END,
    g.at = CASE WHEN newer THEN r.at ELSE g.at END
MERGE (g)-[:TAGS]->(t)
RETURN count(*) AS written
