// The datasets a complete scan would empty: those holding present objects of the scope that the
// scan did not see (last_seen older than its start) and no live object any more (none seen by
// the scan, none outside the scope). A dataset that still has live objects was rewritten (a
// Spark overwrite), not lost. Params: root (`s3://bucket/prefix`: an object's urn is
// `s3://bucket/key`), started (the scan's start, epoch ms).
MATCH (f:File)-[:PART_OF]->(d:Dataset)
WHERE f.urn STARTS WITH $root AND f.deleted_at IS NULL
  AND f.last_seen < $started
WITH d, count(f) AS unseen
OPTIONAL MATCH (g:File)-[:PART_OF]->(d)
WHERE g.deleted_at IS NULL AND (g.last_seen >= $started OR NOT (g.urn STARTS WITH $root))
WITH d, unseen, count(g) AS live
WHERE live = 0
RETURN d.urn AS dataset, unseen AS objects
ORDER BY objects DESC, dataset
