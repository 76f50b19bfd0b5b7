// Add the reads tallied from some S3 access-log or CloudTrail files to the READS_FROM edges of
// their readers, and mark those files counted, in one statement (one transaction): a run
// stopped at any moment has either counted a file's reads and marked it, or done neither, so
// reading the same logs again never counts a read twice. An edge's read_count is the reads
// counted, first_seen and last_seen the first and last read.
// Params: rows ({t: transformation urn, asset: urn, count, first, last: epoch ms}, one per
// pair), logs ({key: the file's location, scope, delivered: epoch ms, reads}).
UNWIND $rows AS r
MATCH (t:Transformation {urn: r.t})
MATCH (a:Asset {urn: r.asset})
MERGE (t)-[e:READS_FROM]->(a)
ON CREATE SET e.first_seen = r.first, e.changed_at = r.first, e.last_seen = r.last,
              e.read_count = r.count
ON MATCH SET
    e.read_count = coalesce(e.read_count, 0) + r.count,
    e.first_seen = CASE WHEN r.first < e.first_seen THEN r.first ELSE e.first_seen END,
    e.last_seen = CASE WHEN r.last > e.last_seen THEN r.last ELSE e.last_seen END
WITH startNode(e) AS s, max(e.changed_at) AS t, count(*) AS written
FOREACH (raise IN CASE WHEN t IS NULL OR s.changed_at >= t THEN [] ELSE [t] END |
         SET s.changed_at = raise)
WITH sum(written) AS written
UNWIND $logs AS l
MERGE (m:S3AccessLog {key: l.key})
ON CREATE SET m.scope = l.scope, m.delivered = l.delivered, m.reads = l.reads
RETURN written, count(m) AS marked
