// A deleted asset's column lineage stops with it: the FEEDS into and out of its columns still
// holding stop at its deletion (as history_stop_deleted does for its lineage). Rows: {urn, at}.
UNWIND $rows AS r
MATCH (n:Asset {urn: r.urn})<-[:COLUMN_OF]-(:Column)-[e:FEEDS]-(:Column)
WHERE n.deleted_at = r.at AND e.retired_at IS NULL
SET e.retired_at = r.at,
    e.changed_at = CASE WHEN e.changed_at >= r.at THEN e.changed_at ELSE r.at END,
    e.stopped = coalesce(e.stopped, []) + [r.at], e.live = []
WITH startNode(e) AS s, max(e.changed_at) AS t
FOREACH (raise IN CASE WHEN t IS NULL OR s.changed_at >= t THEN [] ELSE [t] END |
         SET s.changed_at = raise)
