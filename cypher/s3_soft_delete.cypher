// Soft-delete the objects a complete scan of a scope (bucket + key prefix) no longer sees.
// Params: bucket, prefix, started (the scan's start, epoch ms; also the deletion time).
MATCH (f:File)
WHERE f.bucket = $bucket AND f.key STARTS WITH $prefix AND f.deleted_at IS NULL
  AND f.last_seen < $started
SET f.deleted_at = $started
RETURN count(f) AS deleted
