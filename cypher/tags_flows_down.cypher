// One hop of asset lineage downstream for tag derivation: one row per FLOWS_TO edge leaving
// the frontier's assets, with the asset reached and the column lineage between the two:
// `linked` FEEDS edges, `carrying` of them copied plainly at least once, and the functions
// the others were masked through. An asset-level tag crosses an edge with no column lineage
// or a carrying one; a column's tag crosses to the asset only where there is no column lineage.
// Params: frontier (list of asset urns).
UNWIND $frontier AS u
MATCH (a:Asset {urn: u})-[:FLOWS_TO]->(b:Asset)
WITH u, a, b
WHERE b.deleted_at IS NULL
OPTIONAL MATCH (a)<-[:COLUMN_OF]-(:Column)-[f:FEEDS]->(:Column)-[:COLUMN_OF]->(b)
WITH u, b, collect(f) AS feeds
RETURN u AS src, b.urn AS dst, size(feeds) AS linked,
       size([f IN feeds WHERE coalesce(f.plain, true)]) AS carrying,
       reduce(m = [], f IN feeds | m + [x IN coalesce(f.masked_by, []) WHERE NOT x IN m]) AS masks
