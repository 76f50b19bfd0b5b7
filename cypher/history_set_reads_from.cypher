// Set the facts and history of READS_FROM edges after a window (lineagegraph.graph.history
// recomputes them from the producers' intervals, runs and the endpoints' drops).
// Rows: {src, dst (transformation and asset urns), held_by, held_from, held_until (parallel
// lists: each producer's intervals, -1 while one holds), stopped, resumed (lists or null),
// retired_at (null while the edge holds), changed_at (the newest of first_seen, stops and returns),
// live (the transformations producing it now; unused here)}.
UNWIND $rows AS r
MATCH (:Transformation {urn: r.src})-[e:READS_FROM]->(:Asset {urn: r.dst})
SET e.held_by = r.held_by, e.held_from = r.held_from, e.held_until = r.held_until,
    e.stopped = r.stopped, e.resumed = r.resumed, e.retired_at = r.retired_at,
    e.changed_at = r.changed_at
WITH startNode(e) AS s, max(e.changed_at) AS t
FOREACH (raise IN CASE WHEN t IS NULL OR s.changed_at >= t THEN [] ELSE [t] END |
         SET s.changed_at = raise)
