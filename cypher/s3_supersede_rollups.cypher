// A harvest of a scope (bucket + key prefix) replaces the roll-ups earlier harvests wrote of it
// or of a scope within it: those as new (the same report harvested again) are removed; the older
// ones stop counting from then (reports --as-of an earlier time still read them).
// Params: bucket, prefix, seen (the harvest's time, epoch ms).
// Two parts, the DELETE first: on FalkorDB 4.16 a SET on rows that a later WHERE drops is lost
// (`SET ... WITH r WHERE again DETACH DELETE r` never marked the older roll-ups).
OPTIONAL MATCH (again:Rollup)
WHERE again.bucket = $bucket AND again.prefix STARTS WITH $prefix AND again.deleted_at IS NULL
  AND again.first_seen >= $seen
DETACH DELETE again
WITH count(*) AS removed
MATCH (r:Rollup)
WHERE r.bucket = $bucket AND r.prefix STARTS WITH $prefix AND r.deleted_at IS NULL
SET r.deleted_at = $seen
