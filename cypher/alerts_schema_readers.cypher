// What reads the dropped or retyped columns of each asset: the columns they FEED, how many
// FEEDS leave any of the asset's columns, and the jobs that read the asset. Params: rows (list
// of {asset, columns: the column names}). Only edges that hold now (not retired).
UNWIND $rows AS r
MATCH (a:Asset {urn: r.asset})
OPTIONAL MATCH (a)<-[:COLUMN_OF]-(c:Column)-[f:FEEDS]->(d:Column)
WHERE f.retired_at IS NULL
WITH a, r, collect(DISTINCT CASE WHEN c.name IN r.columns THEN d.urn END) AS fed,
     count(d) AS feeds
OPTIONAL MATCH (t:Transformation)-[x:READS_FROM]->(a)
WHERE x.retired_at IS NULL
RETURN r.asset AS asset, fed, feeds, collect(DISTINCT t.name) AS readers
