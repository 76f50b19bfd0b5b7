// Data flow paths of personal data: from every column a source or a person tagged pii (or
// contains_pii = true, as dbt meta often says it) along FEEDS, up to 10 hops, over edges that
// copied the value plainly at least once (a masked-only edge stops it) and that still hold (not retired), shortest first.
// Blocks and tags derived through assets are left to `lineagegraph tags`, which this
// statement does not replace: it is the raw query to start from in other tools.
// Params: limit.
// Run:
//   lineagegraph query --name tags_pii_flow_paths -p limit=100
MATCH (g:Tag)-[:TAGS]->(c:Column)
WHERE g.removed_at IS NULL
  AND (g.key = 'pii' OR (g.key = 'contains_pii' AND toLower(coalesce(g.value, '')) = 'true'))
MATCH p = (c)-[:FEEDS*1..10]->(d:Column)
WHERE all(e IN relationships(p) WHERE coalesce(e.plain, true) AND e.retired_at IS NULL)
RETURN c.urn AS origin, g.key AS key, g.value AS value, g.source AS source,
       [n IN nodes(p) | n.urn] AS path, length(p) AS hops
ORDER BY hops, origin
LIMIT $limit
