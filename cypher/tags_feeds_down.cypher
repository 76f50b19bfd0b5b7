// One hop of column lineage downstream for tag derivation: one row per FEEDS edge leaving the
// frontier's columns, with the column reached, its asset, and the functions that stop a tag
// there (`masks`: the edge's masked_by when no sighting copied the value plainly, else []).
// Columns of deleted assets are not followed: data no longer flows through them.
// Params: frontier (list of column urns).
UNWIND $frontier AS u
MATCH (:Column {urn: u})-[e:FEEDS]->(b:Column)
OPTIONAL MATCH (b)-[:COLUMN_OF]->(owner:Asset)
WITH u, e, b, owner
WHERE owner IS NULL OR owner.deleted_at IS NULL
RETURN u AS src, b.urn AS dst, owner.urn AS asset,
       CASE WHEN coalesce(e.plain, true) THEN [] ELSE coalesce(e.masked_by, []) END AS masks
