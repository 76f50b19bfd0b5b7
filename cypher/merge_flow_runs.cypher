// FLOWS_TO seen in several runs at once (one window of a harvest, reduced). Rows: {src, dst,
// times (distinct sighting times), first, last, via: [transformation urn, ...]}. The same result
// as one merge_flows row per sighting in time order: `runs` grows only for sightings newer than
// last_seen, so replayed windows change nothing.
// Returns the rows written: one whose endpoint is not in the graph is left out (the writer
// writes it again at the end of the run, then counts it as dropped).
UNWIND $rows AS r
MATCH (a:Asset {urn: r.src})
MATCH (b:Asset {urn: r.dst})
MERGE (a)-[e:FLOWS_TO]->(b)
ON CREATE SET e.first_seen = r.first, e.changed_at = r.first, e.last_seen = r.first - 1,
              e.runs = 0, e.via = [],
              e.live = r.via
WITH e, r, size([x IN r.times WHERE x > e.last_seen]) AS added
SET e.runs = e.runs + added,
    e.first_seen = CASE WHEN r.first < e.first_seen THEN r.first ELSE e.first_seen END,
    e.via = e.via + [v IN r.via WHERE NOT v IN e.via],
    e.last_seen = CASE WHEN r.last > e.last_seen THEN r.last ELSE e.last_seen END
WITH startNode(e) AS s, max(e.changed_at) AS t, count(*) AS written
FOREACH (raise IN CASE WHEN t IS NULL OR s.changed_at >= t THEN [] ELSE [t] END |
         SET s.changed_at = raise)
RETURN sum(written) AS written
