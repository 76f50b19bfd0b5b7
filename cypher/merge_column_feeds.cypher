// Column-level lineage. Rows: {src, dst, at, via: [transformation urn] or []}.
// Returns the rows written: one whose endpoint is not in the graph is left out (the writer
// writes it again at the end of the run, then counts it as dropped).
UNWIND $rows AS r
MATCH (a:Column {urn: r.src})
MATCH (b:Column {urn: r.dst})
MERGE (a)-[e:FEEDS]->(b)
ON CREATE SET e.first_seen = r.at, e.last_seen = r.at, e.via = r.via
ON MATCH SET
    e.first_seen = CASE WHEN r.at < e.first_seen THEN r.at ELSE e.first_seen END,
    e.via = e.via + [v IN r.via WHERE NOT v IN e.via],
    e.last_seen = CASE WHEN r.at > e.last_seen THEN r.at ELSE e.last_seen END
RETURN count(*) AS written
