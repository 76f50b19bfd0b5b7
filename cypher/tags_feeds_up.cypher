// One hop of column lineage upstream for tag derivation (the slice behind one column or
// asset): one row per FEEDS edge into the frontier's columns, with the feeding column, its
// asset and the functions that stop a tag on the edge (its masked_by when no sighting copied
// the value plainly, else []). Columns of deleted assets are left out: data no longer flows
// through them, nor along a retired edge (docs/history.md).
// Params: frontier (list of column urns).
UNWIND $frontier AS u
MATCH (owner:Asset)<-[:COLUMN_OF]-(a:Column)-[e:FEEDS]->(:Column {urn: u})
WITH u, e, a, owner
WHERE owner.deleted_at IS NULL AND e.retired_at IS NULL
RETURN a.urn AS src, u AS dst, owner.urn AS asset,
       CASE WHEN coalesce(e.plain, true) THEN [] ELSE coalesce(e.masked_by, []) END AS masks
