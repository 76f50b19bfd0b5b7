// One page of the FEEDS edges only ever masked (no sighting copied the value plainly: a tag
// stops there), with the functions, for the source columns with ids in [$from, $to) (see
// tags_page_assets).
// Params: from, to.
MATCH (a:Column)-[e:FEEDS]->(b:Column)
WHERE id(a) >= $from AND id(a) < $to AND NOT coalesce(e.plain, true)
RETURN id(a) AS src, id(b) AS dst, coalesce(e.masked_by, []) AS masks
