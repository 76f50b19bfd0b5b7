// A harvest of a scope (bucket + key prefix) replaces the roll-ups earlier harvests wrote of it
// or of a scope within it: those older than `seen` stop counting from then (reports --as-of an
// earlier time still read them); those as new (the same report harvested again) are removed.
// Params: bucket, prefix, seen (the harvest's time, epoch ms).
MATCH (r:Rollup)
WHERE r.bucket = $bucket AND r.prefix STARTS WITH $prefix AND r.deleted_at IS NULL
WITH r, r.first_seen >= $seen AS again
SET r.deleted_at = CASE WHEN again THEN r.deleted_at ELSE $seen END
WITH r WHERE again
DETACH DELETE r
