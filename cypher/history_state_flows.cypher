// The history of FLOWS_TO edges before a window of runs is written (lineagegraph.graph.history):
// those the window sighted, and those still held by a transformation that ran in it (which
// may have stopped producing them). `live`: the transformations producing the edge now.
// Params: rows ({src, dst}), jobs (urns of the transformations that ran).
UNWIND $rows AS r
MATCH (a:Asset {urn: r.src})-[e:FLOWS_TO]->(b:Asset {urn: r.dst})
RETURN a.urn AS src, b.urn AS dst, e.first_seen AS first_seen, e.last_seen AS last_seen,
       e.stopped AS stopped,
       e.resumed AS resumed, e.retired_at AS retired_at, coalesce(e.live, e.via) AS live
UNION
UNWIND $jobs AS t
MATCH (:Transformation {urn: t})-[:WRITES_TO]->(b:Asset)<-[e:FLOWS_TO]-(a:Asset)
WHERE e.retired_at IS NULL AND t IN coalesce(e.live, e.via)
RETURN a.urn AS src, b.urn AS dst, e.first_seen AS first_seen, e.last_seen AS last_seen,
       e.stopped AS stopped,
       e.resumed AS resumed, e.retired_at AS retired_at, coalesce(e.live, e.via) AS live
