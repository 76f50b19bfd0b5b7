// Before a complete scan soft-deletes: how many present objects its scope holds and how many of
// them the scan did not see (last_seen older than the scan's start).
// Params: root (`s3://bucket/prefix`: an object's urn is `s3://bucket/key`), started.
MATCH (f:File)
WHERE f.urn STARTS WITH $root AND f.deleted_at IS NULL
RETURN count(f) AS present,
       sum(CASE WHEN f.last_seen < $started THEN 1 ELSE 0 END) AS unseen
