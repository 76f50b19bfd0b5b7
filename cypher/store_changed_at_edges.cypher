// Embedded store only (see store_changed_at_assets): set `changed_at` on the lineage edges
// leaving nodes with ids in [$from, $to) to the newest of their history times (first_seen,
// every stop and return), and raise each such node's to the newest of its edges'. Run after
// store_changed_at_assets on the same ids. Returns how many nodes have lineage edges there.
MATCH (a)-[e:FLOWS_TO|FEEDS|READS_FROM|WRITES_TO]->()
WHERE id(a) >= $from AND id(a) < $to
WITH a, e, [t IN coalesce(e.stopped, []) + coalesce(e.resumed, []) + [e.first_seen, e.retired_at]
            WHERE t IS NOT NULL] AS times
SET e.changed_at = reduce(m = null, t IN times | CASE WHEN m >= t THEN m ELSE t END)
WITH a, max(e.changed_at) AS t
SET a.changed_at = CASE WHEN t IS NULL OR a.changed_at >= t THEN a.changed_at ELSE t END
RETURN count(a) AS set
