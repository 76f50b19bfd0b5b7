// Set the history of FEEDS edges after a window of runs (lineagegraph.graph.history computes
// it from what the graph held and what the window's runs produced).
// Rows: {src, dst (column urns), stopped, resumed (lists or null), retired_at (null while the
// edge holds), live (the transformations producing it now)}.
UNWIND $rows AS r
MATCH (:Column {urn: r.src})-[e:FEEDS]->(:Column {urn: r.dst})
SET e.stopped = r.stopped, e.resumed = r.resumed, e.retired_at = r.retired_at,
    e.changed_at = reduce(m = e.changed_at, t IN coalesce(r.stopped, []) + coalesce(r.resumed, []) |
                          CASE WHEN m >= t THEN m ELSE t END), e.live = r.live
WITH startNode(e) AS s, max(e.changed_at) AS t
FOREACH (raise IN CASE WHEN t IS NULL OR s.changed_at >= t THEN [] ELSE [t] END |
         SET s.changed_at = raise)
