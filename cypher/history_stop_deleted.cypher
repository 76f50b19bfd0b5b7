// A deleted asset's lineage stops with it: its FLOWS_TO (both ways), READS_FROM and WRITES_TO
// still holding stop at its deletion, and no transformation produces them any more (a later
// run that does resumes them). Run after a soft delete. Rows: {urn, at}.
UNWIND $rows AS r
MATCH (n:Asset {urn: r.urn})-[e:FLOWS_TO|READS_FROM|WRITES_TO]-()
WHERE n.deleted_at = r.at AND e.retired_at IS NULL
SET e.retired_at = r.at,
    e.changed_at = CASE WHEN e.changed_at >= r.at THEN e.changed_at ELSE r.at END,
    e.stopped = coalesce(e.stopped, []) + [r.at], e.live = []
WITH startNode(e) AS s, max(e.changed_at) AS t
FOREACH (raise IN CASE WHEN t IS NULL OR s.changed_at >= t THEN [] ELSE [t] END |
         SET s.changed_at = raise)
