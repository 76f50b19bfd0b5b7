// Object count and bytes per storage class of some datasets, from the graph's present files (so
// files outside the scanned scope count too). A dataset left with no present file returns one
// row with a null class and zeros. Params: datasets (urns, from s3_scope_datasets). toInteger:
// FalkorDB sums integers as a double and sends 15 significant digits (a petabyte would round).
UNWIND $datasets AS urn
MATCH (d:Asset:Dataset {urn: urn})
OPTIONAL MATCH (g:File)-[:PART_OF]->(d)
WHERE g.deleted_at IS NULL
RETURN d.urn AS dataset, g.storage_class AS storage_class, count(g) AS objects,
       toInteger(sum(coalesce(g.size, 0))) AS bytes
