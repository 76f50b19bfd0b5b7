// Embedded store only (lineagegraph.graph.falkordb, bringing a store written before
// `changed_at` up to date): set it on the assets with node ids in [$from, $to) to the newest of
// their history times (first_seen, every deletion and return). Returns how many were set.
MATCH (a:Asset)
WHERE id(a) >= $from AND id(a) < $to
WITH a, [t IN coalesce(a.deleted, []) + coalesce(a.restored, []) + [a.first_seen, a.deleted_at]
         WHERE t IS NOT NULL] AS times
SET a.changed_at = reduce(m = null, t IN times | CASE WHEN m >= t THEN m ELSE t END)
RETURN count(a) AS set
