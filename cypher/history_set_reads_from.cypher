// Set the history of READS_FROM edges after a window of runs (lineagegraph.graph.history computes
// it from what the graph held and what the window's runs produced).
// Rows: {src (transformation urn), dst (asset urn), stopped, resumed (lists or null),
// retired_at (null while the edge holds), live (unused here)}.
UNWIND $rows AS r
MATCH (:Transformation {urn: r.src})-[e:READS_FROM]->(:Asset {urn: r.dst})
SET e.stopped = r.stopped, e.resumed = r.resumed, e.retired_at = r.retired_at,
    e.changed_at = reduce(m = e.changed_at, t IN coalesce(r.stopped, []) + coalesce(r.resumed, []) |
                          CASE WHEN m >= t THEN m ELSE t END)
WITH startNode(e) AS s, max(e.changed_at) AS t
FOREACH (raise IN CASE WHEN t IS NULL OR s.changed_at >= t THEN [] ELSE [t] END |
         SET s.changed_at = raise)
