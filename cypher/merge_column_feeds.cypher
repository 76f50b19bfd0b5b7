// Column-level lineage. Rows: {src, dst, at, via: [transformation urn] or [],
// masked_by: [function name] or []}.
// `masked_by` collects the functions dst was computed through that carry no identity (SHA2,
// MD5, a masking policy, COUNT); `plain` is true once any sighting copied the value without
// one. Classifications stop at an edge with masked_by and no plain sighting.
// Returns the rows written: one whose endpoint is not in the graph is left out (the writer
// writes it again at the end of the run, then counts it as dropped).
// A sighting after the edge stopped holding (retired_at) resumes it, and `live` gains
// the transformations seen (docs/history.md).
UNWIND $rows AS r
MATCH (a:Column {urn: r.src})
MATCH (b:Column {urn: r.dst})
MERGE (a)-[e:FEEDS]->(b)
ON CREATE SET e.first_seen = r.at, e.changed_at = r.at, e.last_seen = r.at, e.via = r.via,
              e.live = r.via,
              e.masked_by = r.masked_by,
              e.plain = size(r.masked_by) = 0
ON MATCH SET
    e.changed_at = CASE WHEN e.retired_at IS NOT NULL AND r.at > e.retired_at
                         AND coalesce(e.changed_at, 0) < r.at THEN r.at ELSE e.changed_at END,
    e.resumed = CASE WHEN e.retired_at IS NOT NULL AND r.at > e.retired_at
                     THEN coalesce(e.resumed, []) + [r.at] ELSE e.resumed END,
    e.retired_at = CASE WHEN r.at > e.retired_at THEN null ELSE e.retired_at END,
    e.live = coalesce(e.live, e.via) + [v IN r.via WHERE NOT v IN coalesce(e.live, e.via)],
    e.first_seen = CASE WHEN r.at < e.first_seen THEN r.at ELSE e.first_seen END,
    e.via = e.via + [v IN r.via WHERE NOT v IN e.via],
    e.masked_by = coalesce(e.masked_by, []) + [m IN r.masked_by WHERE NOT m IN coalesce(e.masked_by, [])],
    e.plain = coalesce(e.plain, true) OR size(r.masked_by) = 0,
    e.last_seen = CASE WHEN r.at > e.last_seen THEN r.at ELSE e.last_seen END
WITH startNode(e) AS s, max(e.changed_at) AS t, count(*) AS written
FOREACH (raise IN CASE WHEN t IS NULL OR s.changed_at >= t THEN [] ELSE [t] END |
         SET s.changed_at = raise)
RETURN sum(written) AS written
