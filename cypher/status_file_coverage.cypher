// S3 objects whose dataset has lineage, by the dataset's system; the edges are counted per
// dataset, not per object.
MATCH (d:Dataset)
WHERE d.deleted_at IS NULL
OPTIONAL MATCH (d)-[f:FLOWS_TO]-()
WITH d, count(f) AS flows
OPTIONAL MATCH ()-[t:READS_FROM|WRITES_TO]->(d)
WITH d, flows, count(t) AS touches
WITH d, flows + touches AS links
MATCH (o:File)-[:PART_OF]->(d)
WHERE o.deleted_at IS NULL
RETURN 'File' AS kind, d.system AS system, count(o) AS assets,
       count(CASE WHEN links > 0 THEN 1 END) AS with_lineage
ORDER BY system
