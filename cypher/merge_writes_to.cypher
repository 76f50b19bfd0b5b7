// (:Transformation)-[:WRITES_TO]->(:Asset). Rows: {t, asset, at}.
// Returns the rows written: one whose endpoint is not in the graph is left out (the writer
// writes it again at the end of the run, then counts it as dropped).
UNWIND $rows AS r
MATCH (t:Transformation {urn: r.t})
MATCH (a:Asset {urn: r.asset})
MERGE (t)-[e:WRITES_TO]->(a)
ON CREATE SET e.first_seen = r.at, e.last_seen = r.at
ON MATCH SET
    e.first_seen = CASE WHEN r.at < e.first_seen THEN r.at ELSE e.first_seen END,
    e.last_seen = CASE WHEN r.at > e.last_seen THEN r.at ELSE e.last_seen END
RETURN count(*) AS written
