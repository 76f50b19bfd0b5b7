// Neo4j (see store_changed_at_page_assets): the next $page columns by urn after $after get
// `changed_at` raised to the newest of the FEEDS edges leaving them, each edge set to the
// newest of its own history times (first_seen, every stop and return). A column's own history
// time (first_seen) has an index of its own, so one without FEEDS is left as it is. Returns
// the page's last urn (null once no column is left) and how many columns it held.
MATCH (c:Column)
WHERE c.urn > $after
WITH c
ORDER BY c.urn
LIMIT $page
OPTIONAL MATCH (c)-[e:FEEDS]->()
WITH c, e, [t IN coalesce(e.stopped, []) + coalesce(e.resumed, []) +
                 [e.first_seen, e.retired_at, e.changed_at] WHERE t IS NOT NULL] AS times
WITH c, e, reduce(m = null, t IN times | CASE WHEN m >= t THEN m ELSE t END) AS edge_at
FOREACH (edge IN CASE WHEN e IS NULL THEN [] ELSE [e] END | SET edge.changed_at = edge_at)
WITH c, max(edge_at) AS t
FOREACH (raise IN CASE WHEN t IS NULL OR c.changed_at >= t THEN [] ELSE [t] END |
         SET c.changed_at = raise)
RETURN max(c.urn) AS last, count(c) AS done
