// End-to-end lineage from a raw S3 prefix to a Snowflake table: for the prefix and each
// dataset under it, the shortest FLOWS_TO path to the table (at most 20 hops), shortest first.
// Params: prefix (an S3 dataset urn, no trailing /), table (a Snowflake table urn).
// Run:
//   lineagegraph query --name example_s3_to_table_path -p prefix=s3://raw-bucket/orders \
//     -p table=snowflake://acme-prod/ANALYTICS.MARTS.DAILY_SALES
// `lineagegraph path FROM TO` lists every path up to a depth and draws them.
MATCH (t:Asset:Table {urn: $table})
MATCH (s:Asset:Dataset)
WHERE (s.urn = $prefix OR s.urn STARTS WITH ($prefix + '/')) AND s.deleted_at IS NULL
WITH s, shortestPath((s)-[:FLOWS_TO*..20]->(t)) AS p
WHERE p IS NOT NULL
RETURN s.urn AS source, length(p) AS hops, [n IN nodes(p) | n.urn] AS path
ORDER BY hops, source
LIMIT 20
