// Object count and bytes per storage class of the datasets holding objects of a scope, from the
// graph's present files (so files outside the scope count too). One page of datasets in urn
// order. A dataset left with no present file returns one row with a null class and zeros.
// Params: bucket, prefix, after (the last dataset urn of the previous page, '' first), limit.
MATCH (f:File)-[:PART_OF]->(d:Dataset)
WHERE f.bucket = $bucket AND f.key STARTS WITH $prefix AND d.urn > $after
WITH DISTINCT d
ORDER BY d.urn
LIMIT $limit
OPTIONAL MATCH (g:File)-[:PART_OF]->(d)
WHERE g.deleted_at IS NULL
RETURN d.urn AS dataset, g.storage_class AS storage_class, count(g) AS objects,
       sum(coalesce(g.size, 0)) AS bytes
