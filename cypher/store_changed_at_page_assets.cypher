// Neo4j (lineagegraph.graph.upgrade: a store written before `changed_at`): the next $page
// assets by urn after $after get `changed_at` set to the newest of their own history times
// (first_seen, every deletion and return) and of the FLOWS_TO edges leaving them, each edge to
// the newest of its own (first_seen, every stop and return). Keyset paging on the urn index,
// so every page costs the same however far in it is; never lowers a value, so a page run
// twice, or after a harvest raised one, changes nothing. Returns the page's last urn (null
// once no asset is left) and how many assets it held.
MATCH (a:Asset)
WHERE a.urn > $after
WITH a
ORDER BY a.urn
LIMIT $page
OPTIONAL MATCH (a)-[e:FLOWS_TO]->()
WITH a, e, [t IN coalesce(e.stopped, []) + coalesce(e.resumed, []) +
                 [e.first_seen, e.retired_at, e.changed_at] WHERE t IS NOT NULL] AS times
WITH a, e, reduce(m = null, t IN times | CASE WHEN m >= t THEN m ELSE t END) AS edge_at
FOREACH (edge IN CASE WHEN e IS NULL THEN [] ELSE [e] END | SET edge.changed_at = edge_at)
WITH a, max(edge_at) AS edges_at
WITH a, [t IN coalesce(a.deleted, []) + coalesce(a.restored, []) +
              [a.first_seen, a.deleted_at, a.changed_at, edges_at] WHERE t IS NOT NULL] AS times
SET a.changed_at = reduce(m = null, t IN times | CASE WHEN m >= t THEN m ELSE t END)
RETURN max(a.urn) AS last, count(a) AS done
