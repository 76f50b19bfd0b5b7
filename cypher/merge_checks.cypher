// A data-quality check (a dbt test, an OpenLineage assertion) and its latest result, and
// (:Check)-[:CHECKS]->(target), the :Asset or :Column it tests. Returns the rows written: one
// whose target is not in the graph is left out (the writer writes it again at the end of the
// run, then counts it as dropped).
// Rows: {urn, system, name, target, status, rank, failures, at, run_id}; rank orders statuses
// from best to worst (lineagegraph.questions.quality.RANK). A result replaces the stored one only when it
// is newer, or as new and worse (higher rank, then more failures): an older result never
// overwrites a newer one, a replayed result changes nothing, and two results with the same time
// give the same node in either order.
UNWIND $rows AS r
OPTIONAL MATCH (asset:Asset {urn: r.target})
OPTIONAL MATCH (column:Column {urn: r.target})
WITH r, coalesce(asset, column) AS t
WHERE t IS NOT NULL
MERGE (c:Check {urn: r.urn})
ON CREATE SET c.system = r.system, c.name = r.name, c.first_seen = r.at, c.at = -1, c.rank = -1,
              c.failures = -1
WITH c, t, r,
     r.at > c.at OR (r.at = c.at AND (r.rank > c.rank OR (r.rank = c.rank AND
       coalesce(r.failures, -1) > coalesce(c.failures, -1)))) AS newer
SET c.status = CASE WHEN newer THEN r.status ELSE c.status END,
    c.rank = CASE WHEN newer THEN r.rank ELSE c.rank END,
    c.failures = CASE WHEN newer THEN r.failures ELSE c.failures END,
    c.run_id = CASE WHEN newer THEN r.run_id ELSE c.run_id END,
    c.name = CASE WHEN newer THEN r.name ELSE c.name END,
    c.first_seen = CASE WHEN r.at < c.first_seen THEN r.at ELSE c.first_seen END,
    c.at = CASE WHEN newer THEN r.at ELSE c.at END
MERGE (c)-[:CHECKS]->(t)
RETURN count(*) AS written
