// One page of the FEEDS edges that copied a value plainly at least once (a tag crosses them),
// by the internal ids of their columns, for the source columns with ids in [$from, $to) (see
// tags_page_assets). Masked-only edges come from tags_page_masked_feeds.
// Params: from, to.
MATCH (a:Column)-[e:FEEDS]->(b:Column)
WHERE id(a) >= $from AND id(a) < $to AND coalesce(e.plain, true)
RETURN id(a) AS src, id(b) AS dst
