// Neo4j (see store_changed_at_page_assets): the next $page transformations by urn after $after
// get `changed_at` raised to the newest of the READS_FROM and WRITES_TO edges leaving them,
// each edge set to the newest of its own history times (first_seen, every stop and return).
// Returns the page's last urn (null once none is left) and how many it held.
MATCH (x:Transformation)
WHERE x.urn > $after
WITH x
ORDER BY x.urn
LIMIT $page
OPTIONAL MATCH (x)-[e:READS_FROM|WRITES_TO]->()
WITH x, e, [t IN coalesce(e.stopped, []) + coalesce(e.resumed, []) +
                 [e.first_seen, e.retired_at, e.changed_at] WHERE t IS NOT NULL] AS times
WITH x, e, reduce(m = null, t IN times | CASE WHEN m >= t THEN m ELSE t END) AS edge_at
FOREACH (edge IN CASE WHEN e IS NULL THEN [] ELSE [e] END | SET edge.changed_at = edge_at)
WITH x, max(edge_at) AS t
FOREACH (raise IN CASE WHEN t IS NULL OR x.changed_at >= t THEN [] ELSE [t] END |
         SET x.changed_at = raise)
RETURN max(x.urn) AS last, count(x) AS done
