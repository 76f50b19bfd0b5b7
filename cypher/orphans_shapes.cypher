// Which shapes of S3 storage the graph holds: 'objects' (any :File, harvested one by one) and
// 'rollups' (any :Rollup, an S3 Inventory tallied by Spark). The reports walk only the shapes
// there are, and a graph of neither says "harvest S3 first" instead of reading as "no orphans".
// Params: none.
MATCH (f:File)
RETURN 'objects' AS shape
LIMIT 1
UNION
MATCH (r:Rollup)
RETURN 'rollups' AS shape
LIMIT 1
