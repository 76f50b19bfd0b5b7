// The facts of FEEDS edges a window recomputes (lineagegraph.graph.history): those it sighted,
// those a job that ran in it held in an interval not ended before its earliest run in it, and
// those of assets whose drops grew. Per edge: its intervals per producer (held_by, held_from,
// held_until: -1 while it holds), the assets whose drops stop it and their drops, and the
// history derived before. Params: rows ({src, dst}), jobs ({t, after}), assets (asset urns).
UNWIND $rows AS r
MATCH (a:Column {urn: r.src})-[e:FEEDS]->(b:Column {urn: r.dst})
OPTIONAL MATCH (a)-[:COLUMN_OF]->(sa:Asset)
OPTIONAL MATCH (b)-[:COLUMN_OF]->(da:Asset)
RETURN a.urn AS src, b.urn AS dst, sa.urn AS src_asset, da.urn AS dst_asset,
       sa.drops AS src_drops, da.drops AS dst_drops, e.held_by AS held_by, e.held_from AS held_from,
       e.held_until AS held_until, e.first_seen AS first_seen, e.stopped AS stopped,
       e.resumed AS resumed, e.retired_at AS retired_at, coalesce(e.live, e.via) AS live,
       e.changed_at AS changed_at
UNION
UNWIND $jobs AS j
MATCH (:Transformation {urn: j.t})-[:WRITES_TO]->(:Asset)<-[:COLUMN_OF]-(b:Column)<-[e:FEEDS]-(a:Column)
WHERE any(i IN range(0, size(coalesce(e.held_by, [])) - 1)
          WHERE e.held_by[i] = j.t AND (e.held_until[i] = -1 OR e.held_until[i] > j.after))
OPTIONAL MATCH (a)-[:COLUMN_OF]->(sa:Asset)
OPTIONAL MATCH (b)-[:COLUMN_OF]->(da:Asset)
RETURN a.urn AS src, b.urn AS dst, sa.urn AS src_asset, da.urn AS dst_asset,
       sa.drops AS src_drops, da.drops AS dst_drops, e.held_by AS held_by, e.held_from AS held_from,
       e.held_until AS held_until, e.first_seen AS first_seen, e.stopped AS stopped,
       e.resumed AS resumed, e.retired_at AS retired_at, coalesce(e.live, e.via) AS live,
       e.changed_at AS changed_at
UNION
UNWIND $assets AS u
MATCH (:Asset {urn: u})<-[:COLUMN_OF]-(a:Column)-[e:FEEDS]->(b:Column)
OPTIONAL MATCH (a)-[:COLUMN_OF]->(sa:Asset)
OPTIONAL MATCH (b)-[:COLUMN_OF]->(da:Asset)
RETURN a.urn AS src, b.urn AS dst, sa.urn AS src_asset, da.urn AS dst_asset,
       sa.drops AS src_drops, da.drops AS dst_drops, e.held_by AS held_by, e.held_from AS held_from,
       e.held_until AS held_until, e.first_seen AS first_seen, e.stopped AS stopped,
       e.resumed AS resumed, e.retired_at AS retired_at, coalesce(e.live, e.via) AS live,
       e.changed_at AS changed_at
UNION
UNWIND $assets AS u
MATCH (:Asset {urn: u})<-[:COLUMN_OF]-(b:Column)<-[e:FEEDS]-(a:Column)
OPTIONAL MATCH (a)-[:COLUMN_OF]->(sa:Asset)
OPTIONAL MATCH (b)-[:COLUMN_OF]->(da:Asset)
RETURN a.urn AS src, b.urn AS dst, sa.urn AS src_asset, da.urn AS dst_asset,
       sa.drops AS src_drops, da.drops AS dst_drops, e.held_by AS held_by, e.held_from AS held_from,
       e.held_until AS held_until, e.first_seen AS first_seen, e.stopped AS stopped,
       e.resumed AS resumed, e.retired_at AS retired_at, coalesce(e.live, e.via) AS live,
       e.changed_at AS changed_at
