// The history of FEEDS edges before a window of runs is written (lineagegraph.graph.history):
// those the window sighted, and those still held by a transformation that told column lineage
// in it (which may have stopped producing them). `live`: the transformations producing the
// edge now. Params: rows ({src, dst}: column urns), jobs (transformation urns).
UNWIND $rows AS r
MATCH (a:Column {urn: r.src})-[e:FEEDS]->(b:Column {urn: r.dst})
RETURN a.urn AS src, b.urn AS dst, e.first_seen AS first_seen, e.last_seen AS last_seen,
       e.stopped AS stopped,
       e.resumed AS resumed, e.retired_at AS retired_at, coalesce(e.live, e.via) AS live
UNION
UNWIND $jobs AS t
MATCH (:Transformation {urn: t})-[:WRITES_TO]->(:Asset)<-[:COLUMN_OF]-(b:Column)<-[e:FEEDS]-(a:Column)
WHERE e.retired_at IS NULL AND t IN coalesce(e.live, e.via)
RETURN a.urn AS src, b.urn AS dst, e.first_seen AS first_seen, e.last_seen AS last_seen,
       e.stopped AS stopped,
       e.resumed AS resumed, e.retired_at AS retired_at, coalesce(e.live, e.via) AS live
