// (:Column)-[:COLUMN_OF]->(:Asset). Rows: {urn, asset, name, seen}.
UNWIND $rows AS r
MATCH (a:Asset {urn: r.asset})
MERGE (c:Column {urn: r.urn})
ON CREATE SET c.name = r.name, c.first_seen = r.seen, c.last_seen = r.seen
SET c.last_seen = CASE WHEN r.seen > c.last_seen THEN r.seen ELSE c.last_seen END
MERGE (c)-[:COLUMN_OF]->(a)
