// The full scan `lineagegraph diff` used before changed_at and its range indexes, as the
// baseline of benchmarks/bench_history_diff.py.
// Assets whose presence may have changed in a window (since, until]: first seen, deleted or
// back in it; lineagegraph.questions.history compares each at both ends (docs/history.md).
// Params: since, until (epoch ms).
MATCH (a:Asset)
WHERE (a.first_seen > $since AND a.first_seen <= $until)
   OR (a.deleted_at > $since AND a.deleted_at <= $until)
   OR any(d IN coalesce(a.deleted, []) WHERE d > $since AND d <= $until)
   OR any(r IN coalesce(a.restored, []) WHERE r > $since AND r <= $until)
RETURN a.urn AS urn, a.name AS name, a.system AS system,
       CASE WHEN a:Table THEN 'Table' WHEN a:Dataset THEN 'Dataset' WHEN a:File THEN 'File'
            ELSE 'Asset' END AS kind,
       a.first_seen AS first_seen, a.deleted_at AS deleted_at, a.deleted AS deleted,
       a.restored AS restored
