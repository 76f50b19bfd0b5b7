// The FEEDS edges only ever masked (no sighting copied the value plainly: a tag stops there)
// out of the given columns, by internal id, with the functions (see tags_page_feeds, which
// names the columns). Each id is a seek, not a scan.
// Params: ids (list of internal column ids).
UNWIND $ids AS i
MATCH (a:Column)-[e:FEEDS]->(b:Column)
WHERE id(a) = i AND NOT coalesce(e.plain, true) AND e.retired_at IS NULL
RETURN id(a) AS src, id(b) AS dst, coalesce(e.masked_by, []) AS masks
