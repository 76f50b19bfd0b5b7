// The exclusion globs the counting roll-ups were split by, to warn when a report asks for others.
// Params: as_of (epoch ms).
MATCH (r:Rollup)
WHERE r.first_seen <= $as_of AND (r.deleted_at IS NULL OR r.deleted_at > $as_of)
RETURN r.excludes AS excludes, count(r) AS rollups
