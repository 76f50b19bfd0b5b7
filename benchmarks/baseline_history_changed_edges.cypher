// The full scan `lineagegraph diff` used before changed_at and its range indexes, as the
// baseline of benchmarks/bench_history_diff.py.
// Lineage edges (FLOWS_TO, FEEDS, READS_FROM, WRITES_TO) that started, stopped or came back in
// a window (since, until]; lineagegraph.questions.history compares each at both ends.
// Params: since, until (epoch ms).
MATCH (a)-[e:FLOWS_TO|FEEDS|READS_FROM|WRITES_TO]->(b)
WHERE (e.first_seen > $since AND e.first_seen <= $until)
   OR any(s IN coalesce(e.stopped, []) WHERE s > $since AND s <= $until)
   OR any(s IN coalesce(e.resumed, []) WHERE s > $since AND s <= $until)
RETURN type(e) AS kind, a.urn AS src, b.urn AS dst, e.first_seen AS first_seen,
       e.stopped AS stopped, e.resumed AS resumed, coalesce(e.via, []) AS via
