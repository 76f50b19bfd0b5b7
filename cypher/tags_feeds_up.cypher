// One hop of column lineage upstream for tag derivation (the slice behind one column): one
// row per FEEDS edge into the frontier's columns, with the feeding column, its asset and the
// functions that stop a tag on the edge (as in tags_feeds_down).
// Params: frontier (list of column urns).
UNWIND $frontier AS u
MATCH (a:Column)-[e:FEEDS]->(:Column {urn: u})
OPTIONAL MATCH (a)-[:COLUMN_OF]->(owner:Asset)
WITH u, e, a, owner
WHERE owner IS NULL OR owner.deleted_at IS NULL
RETURN a.urn AS src, u AS dst, owner.urn AS asset,
       CASE WHEN coalesce(e.plain, true) THEN [] ELSE coalesce(e.masked_by, []) END AS masks
