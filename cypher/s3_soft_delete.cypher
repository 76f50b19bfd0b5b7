// Soft-delete the objects a complete scan of a scope (bucket + key prefix) no longer sees.
// Params: root (`s3://bucket/prefix`: an object's urn is `s3://bucket/key`), started (the
// scan's start, epoch ms; also the deletion time).
MATCH (f:File)
WHERE f.urn STARTS WITH $root AND f.deleted_at IS NULL
  AND f.last_seen < $started
SET f.deleted_at = $started,
    f.changed_at = CASE WHEN f.changed_at >= $started THEN f.changed_at ELSE $started END,
    f.deleted = coalesce(f.deleted, []) + [$started]
RETURN count(f) AS deleted
