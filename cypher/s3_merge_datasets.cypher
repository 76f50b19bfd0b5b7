// Upsert the :Dataset nodes listed objects belong to, each once per batch. Rows: {urn, name,
// seen}; params: rows, bucket, region (the bucket's, or null: keep the one stored). Like
// merge_datasets, plus the bucket and its region, and a urn already held by
// another kind of asset (an object `a` beside objects under `a/`) is left alone: the files under
// it are then skipped by s3_merge_files instead of failing the batch on the unique constraint.
UNWIND $rows AS r
OPTIONAL MATCH (clash:Asset {urn: r.urn})
WHERE NOT clash:Dataset
WITH r, clash
WHERE clash IS NULL
MERGE (n:Asset:Dataset {urn: r.urn})
ON CREATE SET n.system = 's3', n.name = r.name, n.first_seen = r.seen, n.changed_at = r.seen,
              n.last_seen = r.seen
SET n.bucket = $bucket,
    n.region = coalesce($region, n.region),
    n.first_seen = CASE WHEN r.seen < n.first_seen THEN r.seen ELSE n.first_seen END,
    n.changed_at = CASE WHEN n.deleted_at IS NOT NULL AND r.seen >= n.deleted_at
                          AND coalesce(n.changed_at, 0) < r.seen THEN r.seen ELSE n.changed_at END,
    n.restored = CASE WHEN n.deleted_at IS NOT NULL AND r.seen >= n.deleted_at
                      THEN coalesce(n.restored, []) + [r.seen] ELSE n.restored END,
    n.deleted_at = CASE WHEN n.deleted_at IS NOT NULL AND r.seen < n.deleted_at THEN n.deleted_at ELSE null END,
    n.last_seen = CASE WHEN r.seen > n.last_seen THEN r.seen ELSE n.last_seen END
RETURN count(n) AS written
