// The history of READS_FROM edges before a window of runs is written (lineagegraph.graph.history):
// those the window sighted, and every one still held by a transformation that ran in it (its
// newer run may no longer produce it). `live`: the transformation while the edge holds.
// Params: rows ({src: transformation urn, dst: asset urn}), jobs (transformation urns).
UNWIND $rows AS r
MATCH (t:Transformation {urn: r.src})-[e:READS_FROM]->(a:Asset {urn: r.dst})
RETURN t.urn AS src, a.urn AS dst, e.first_seen AS first_seen, e.last_seen AS last_seen,
       e.stopped AS stopped,
       e.resumed AS resumed, e.retired_at AS retired_at,
       CASE WHEN e.retired_at IS NULL THEN [t.urn] ELSE [] END AS live
UNION
UNWIND $jobs AS u
MATCH (t:Transformation {urn: u})-[e:READS_FROM]->(a:Asset)
WHERE e.retired_at IS NULL
RETURN t.urn AS src, a.urn AS dst, e.first_seen AS first_seen, e.last_seen AS last_seen,
       e.stopped AS stopped,
       e.resumed AS resumed, e.retired_at AS retired_at, [t.urn] AS live
