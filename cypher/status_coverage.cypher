// Lineage coverage: present assets (other than S3 objects) with any lineage edge, by kind and
// system.
// S3 objects are covered through their dataset: see status_file_coverage.
MATCH (n:Asset)
WHERE n.deleted_at IS NULL AND NOT n:File
OPTIONAL MATCH (n)-[f:FLOWS_TO]-()
WITH n, count(f) AS flows
OPTIONAL MATCH ()-[t:READS_FROM|WRITES_TO]->(n)
WITH n, flows, count(t) AS touches
WITH n, flows + touches AS links
RETURN CASE WHEN n:Table THEN 'Table' WHEN n:Dataset THEN 'Dataset' ELSE 'Asset' END AS kind,
       n.system AS system,
       count(n) AS assets, count(CASE WHEN links > 0 THEN 1 END) AS with_lineage
ORDER BY kind, system
