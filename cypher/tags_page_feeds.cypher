// One page of the FEEDS edges, by the internal ids of their columns, for the source columns
// with ids in [$from, $to) (see tags_page_assets): `masked` 1 for an edge no sighting copied
// plainly (a tag stops there; its functions come from tags_masked_feeds_from, for those few
// sources only, so the edges are scanned once), else 0. Retired edges (docs/history.md) are left out. Integers only (GraphStore.read_rows).
// Params: from, to.
MATCH (a:Column)-[e:FEEDS]->(b:Column)
WHERE id(a) >= $from AND id(a) < $to AND e.retired_at IS NULL
RETURN id(a) AS src, id(b) AS dst, CASE WHEN coalesce(e.plain, true) THEN 0 ELSE 1 END AS masked
