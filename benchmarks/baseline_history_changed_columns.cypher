// The full scan `lineagegraph diff` used before changed_at and its range indexes, as the
// baseline of benchmarks/bench_history_diff.py.
// Columns whose presence may have changed in a window (since, until]: first seen in it, or of
// an asset deleted or back in it (a column is there while its asset is); compared at both
// ends by lineagegraph.questions.history. Params: since, until (epoch ms).
MATCH (c:Column)-[:COLUMN_OF]->(a:Asset)
WHERE (c.first_seen > $since AND c.first_seen <= $until)
   OR (a.deleted_at > $since AND a.deleted_at <= $until)
   OR any(d IN coalesce(a.deleted, []) WHERE d > $since AND d <= $until)
   OR any(r IN coalesce(a.restored, []) WHERE r > $since AND r <= $until)
RETURN c.urn AS urn, c.name AS name, a.urn AS asset, a.system AS system, 'Column' AS kind,
       c.first_seen AS first_seen, a.deleted_at AS deleted_at, a.deleted AS deleted,
       a.restored AS restored
