// The time of the newest roll-ups still counting for a scope (bucket + key prefix) or a scope
// within it, so that an older S3 Inventory is not harvested over a newer one. Params: bucket,
// prefix.
MATCH (r:Rollup)
WHERE r.bucket = $bucket AND r.prefix STARTS WITH $prefix AND r.deleted_at IS NULL
RETURN max(r.first_seen) AS newest
