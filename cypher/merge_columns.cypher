// (:Column)-[:COLUMN_OF]->(:Asset). Rows: {urn, asset, name, seen}. An older sighting (a
// replayed window) lowers first_seen and leaves last_seen alone.
// Returns the rows written: one whose endpoint is not in the graph is left out (the writer
// writes it again at the end of the run, then counts it as dropped).
UNWIND $rows AS r
MATCH (a:Asset {urn: r.asset})
MERGE (c:Column {urn: r.urn})
ON CREATE SET c.name = r.name, c.first_seen = r.seen, c.last_seen = r.seen
SET c.first_seen = CASE WHEN r.seen < c.first_seen THEN r.seen ELSE c.first_seen END,
    c.last_seen = CASE WHEN r.seen > c.last_seen THEN r.seen ELSE c.last_seen END
MERGE (c)-[:COLUMN_OF]->(a)
RETURN count(*) AS written
