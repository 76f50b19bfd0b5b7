// Lineage edges (FLOWS_TO, FEEDS, READS_FROM, WRITES_TO) that started, stopped or came back in
// a window (since, until]; lineagegraph.questions.history compares each at both ends.
// One part per type, each from its range index on `changed_at` (the newest of the edge's
// history times; an index serves one relationship type). Params: since, until (epoch ms).
MATCH (a)-[e:FLOWS_TO]->(b)
WHERE e.changed_at > $since
  AND ((e.first_seen > $since AND e.first_seen <= $until)
   OR any(s IN coalesce(e.stopped, []) WHERE s > $since AND s <= $until)
   OR any(s IN coalesce(e.resumed, []) WHERE s > $since AND s <= $until))
RETURN type(e) AS kind, a.urn AS src, b.urn AS dst, e.first_seen AS first_seen,
       e.stopped AS stopped, e.resumed AS resumed, coalesce(e.via, []) AS via
UNION ALL
MATCH (a)-[e:FEEDS]->(b)
WHERE e.changed_at > $since
  AND ((e.first_seen > $since AND e.first_seen <= $until)
   OR any(s IN coalesce(e.stopped, []) WHERE s > $since AND s <= $until)
   OR any(s IN coalesce(e.resumed, []) WHERE s > $since AND s <= $until))
RETURN type(e) AS kind, a.urn AS src, b.urn AS dst, e.first_seen AS first_seen,
       e.stopped AS stopped, e.resumed AS resumed, coalesce(e.via, []) AS via
UNION ALL
MATCH (a)-[e:READS_FROM]->(b)
WHERE e.changed_at > $since
  AND ((e.first_seen > $since AND e.first_seen <= $until)
   OR any(s IN coalesce(e.stopped, []) WHERE s > $since AND s <= $until)
   OR any(s IN coalesce(e.resumed, []) WHERE s > $since AND s <= $until))
RETURN type(e) AS kind, a.urn AS src, b.urn AS dst, e.first_seen AS first_seen,
       e.stopped AS stopped, e.resumed AS resumed, coalesce(e.via, []) AS via
UNION ALL
MATCH (a)-[e:WRITES_TO]->(b)
WHERE e.changed_at > $since
  AND ((e.first_seen > $since AND e.first_seen <= $until)
   OR any(s IN coalesce(e.stopped, []) WHERE s > $since AND s <= $until)
   OR any(s IN coalesce(e.resumed, []) WHERE s > $since AND s <= $until))
RETURN type(e) AS kind, a.urn AS src, b.urn AS dst, e.first_seen AS first_seen,
       e.stopped AS stopped, e.resumed AS resumed, coalesce(e.via, []) AS via
