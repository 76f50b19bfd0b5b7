// How many columns the assets of each blast radius have, for several alerts at once.
// Params: rows (list of {search: int, urn: asset urn}). A search with no columns has no row.
UNWIND $rows AS r
MATCH (c:Column)-[:COLUMN_OF]->(:Asset {urn: r.urn})
RETURN r.search AS search, count(c) AS columns
