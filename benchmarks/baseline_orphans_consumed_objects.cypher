// S3 objects consumed on their own (a Spark read of one file path, a COPY INTO of one key), per
// dataset, for the orphan and cost reports (orphans_usage takes these rows as $touched). An
// edge consumes when it was first seen by as_of and last seen at or after since; a read's time
// is its last sighting, or its first when the last is after as_of (as in orphans_usage).
// Params: as_of, since (epoch ms).
OPTIONAL MATCH (a:File)-[e:FLOWS_TO]->()
WHERE e.first_seen <= $as_of
WITH collect({urn: a.urn, seen: e.last_seen, first: e.first_seen}) AS flows
OPTIONAL MATCH (:Transformation)-[e:READS_FROM]->(a:File)
WHERE e.first_seen <= $as_of
WITH flows, collect({urn: a.urn, seen: e.last_seen, first: e.first_seen}) AS reads
UNWIND flows + reads AS edge
MATCH (a:Asset {urn: edge.urn})-[:PART_OF]->(ad:Dataset)
WITH ad.urn AS dataset, a.urn AS urn, max(edge.seen) >= $since AS live,
     max(CASE WHEN edge.seen <= $as_of THEN edge.seen ELSE edge.first END) AS last
RETURN dataset, collect({urn: urn, live: live, last: last}) AS own
