// (:Transformation)-[:WRITES_TO]->(:Asset). Rows: {t, asset, at}.
// Returns the rows written: one whose endpoint is not in the graph is left out (the writer
// writes it again at the end of the run, then counts it as dropped).
// A sighting after the edge stopped holding (retired_at) resumes it (docs/history.md).
UNWIND $rows AS r
MATCH (t:Transformation {urn: r.t})
MATCH (a:Asset {urn: r.asset})
MERGE (t)-[e:WRITES_TO]->(a)
ON CREATE SET e.first_seen = r.at, e.changed_at = r.at, e.last_seen = r.at
ON MATCH SET
    e.changed_at = CASE WHEN e.retired_at IS NOT NULL AND r.at > e.retired_at
                         AND coalesce(e.changed_at, 0) < r.at THEN r.at ELSE e.changed_at END,
    e.resumed = CASE WHEN e.retired_at IS NOT NULL AND r.at > e.retired_at
                     THEN coalesce(e.resumed, []) + [r.at] ELSE e.resumed END,
    e.retired_at = CASE WHEN r.at > e.retired_at THEN null ELSE e.retired_at END,
    e.first_seen = CASE WHEN r.at < e.first_seen THEN r.at ELSE e.first_seen END,
    e.last_seen = CASE WHEN r.at > e.last_seen THEN r.at ELSE e.last_seen END
WITH startNode(e) AS s, max(e.changed_at) AS t, count(*) AS written
FOREACH (raise IN CASE WHEN t IS NULL OR s.changed_at >= t THEN [] ELSE [t] END |
         SET s.changed_at = raise)
RETURN sum(written) AS written
