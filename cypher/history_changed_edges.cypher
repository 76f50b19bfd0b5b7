// Lineage edges (FLOWS_TO, FEEDS, READS_FROM, WRITES_TO) that started, stopped or came back in
// a window (since, until]; lineagegraph.questions.history compares each at both ends.
// Each part starts from the range index on its source nodes' `changed_at`, which is at least
// the `changed_at` (the newest history time) of every lineage edge leaving them: an index on
// the edges themselves would cost about as much memory as their history.
// Params: since, until (epoch ms).
MATCH (a:Asset)-[e:FLOWS_TO]->(b)
WHERE a.changed_at > $since AND e.changed_at > $since
  AND ((e.first_seen > $since AND e.first_seen <= $until)
   OR any(s IN coalesce(e.stopped, []) WHERE s > $since AND s <= $until)
   OR any(s IN coalesce(e.resumed, []) WHERE s > $since AND s <= $until))
RETURN type(e) AS kind, a.urn AS src, b.urn AS dst, e.first_seen AS first_seen,
       e.stopped AS stopped, e.resumed AS resumed, coalesce(e.via, []) AS via
UNION ALL
MATCH (a:Column)-[e:FEEDS]->(b)
WHERE a.changed_at > $since AND e.changed_at > $since
  AND ((e.first_seen > $since AND e.first_seen <= $until)
   OR any(s IN coalesce(e.stopped, []) WHERE s > $since AND s <= $until)
   OR any(s IN coalesce(e.resumed, []) WHERE s > $since AND s <= $until))
RETURN type(e) AS kind, a.urn AS src, b.urn AS dst, e.first_seen AS first_seen,
       e.stopped AS stopped, e.resumed AS resumed, coalesce(e.via, []) AS via
UNION ALL
MATCH (a:Transformation)-[e:READS_FROM|WRITES_TO]->(b)
WHERE a.changed_at > $since AND e.changed_at > $since
  AND ((e.first_seen > $since AND e.first_seen <= $until)
   OR any(s IN coalesce(e.stopped, []) WHERE s > $since AND s <= $until)
   OR any(s IN coalesce(e.resumed, []) WHERE s > $since AND s <= $until))
RETURN type(e) AS kind, a.urn AS src, b.urn AS dst, e.first_seen AS first_seen,
       e.stopped AS stopped, e.resumed AS resumed, coalesce(e.via, []) AS via
