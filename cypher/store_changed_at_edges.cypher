// Embedded store only (see store_changed_at_assets): set `changed_at` on the lineage edges
// leaving nodes with ids in [$from, $to) to the newest of their history times (first_seen,
// every stop and return). Returns how many were set.
MATCH (a)-[e:FLOWS_TO|FEEDS|READS_FROM|WRITES_TO]->()
WHERE id(a) >= $from AND id(a) < $to
WITH e, [t IN coalesce(e.stopped, []) + coalesce(e.resumed, []) + [e.first_seen, e.retired_at]
         WHERE t IS NOT NULL] AS times
SET e.changed_at = reduce(m = null, t IN times | CASE WHEN m >= t THEN m ELSE t END)
RETURN count(e) AS set
