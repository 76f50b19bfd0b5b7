// (:Transformation)-[:READS_FROM]->(:Asset). Rows: {t, asset, at}.
UNWIND $rows AS r
MATCH (t:Transformation {urn: r.t})
MATCH (a:Asset {urn: r.asset})
MERGE (t)-[e:READS_FROM]->(a)
ON CREATE SET e.first_seen = r.at, e.last_seen = r.at
ON MATCH SET
    e.first_seen = CASE WHEN r.at < e.first_seen THEN r.at ELSE e.first_seen END,
    e.last_seen = CASE WHEN r.at > e.last_seen THEN r.at ELSE e.last_seen END
RETURN count(*) AS written
