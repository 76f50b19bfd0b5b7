// Everything feeding a table: each upstream asset once, at its shortest distance (at most 10
// hops), nearest first, through present assets only.
// Params: table (the table's urn).
// Run:
//   lineagegraph query --name example_table_feeders \
//     -p table=snowflake://acme-prod/ANALYTICS.MARTS.DAILY_SALES
// This enumerates paths; on big graphs `lineagegraph upstream NAME` (level by level) is faster.
MATCH p = (u:Asset)-[:FLOWS_TO*1..10]->(t:Asset {urn: $table})
WHERE u <> t AND all(n IN nodes(p) WHERE n.deleted_at IS NULL)
WITH u, min(length(p)) AS distance
RETURN distance, u.system AS system,
       CASE WHEN u:Table THEN 'Table' WHEN u:Dataset THEN 'Dataset' WHEN u:File THEN 'File'
            ELSE 'Asset' END AS kind,
       u.urn AS urn
ORDER BY distance, urn
