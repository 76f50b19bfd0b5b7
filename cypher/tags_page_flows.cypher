// One page of the FLOWS_TO edges, by the internal ids of their assets, for the source assets
// with ids in [$from, $to) (see tags_page_assets); retired edges (docs/history.md) are left out.
// Params: from, to.
MATCH (a:Asset)-[e:FLOWS_TO]->(b:Asset)
WHERE id(a) >= $from AND id(a) < $to AND e.retired_at IS NULL
RETURN id(a) AS src, id(b) AS dst
