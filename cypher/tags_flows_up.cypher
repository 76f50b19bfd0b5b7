// One hop of asset lineage upstream for tag derivation (the slice behind one asset): one row
// per FLOWS_TO edge into the frontier's assets, with the feeding asset and the column lineage
// between the two, as in tags_flows_down. Retired edges (docs/history.md) are not followed.
// Params: frontier (list of asset urns).
UNWIND $frontier AS u
MATCH (a:Asset)-[e:FLOWS_TO]->(b:Asset {urn: u})
WITH u, e, a, b
WHERE a.deleted_at IS NULL AND e.retired_at IS NULL
OPTIONAL MATCH (a)<-[:COLUMN_OF]-(:Column)-[f:FEEDS]->(:Column)-[:COLUMN_OF]->(b)
WHERE f.retired_at IS NULL
WITH u, a, collect(f) AS feeds
RETURN a.urn AS src, u AS dst, size(feeds) AS linked,
       size([f IN feeds WHERE coalesce(f.plain, true)]) AS carrying,
       reduce(m = [], f IN feeds | m + [x IN coalesce(f.masked_by, []) WHERE NOT x IN m]) AS masks
