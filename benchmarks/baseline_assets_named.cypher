// The whole-name lookup lineagegraph used before dotted tails were short names, as the
// baseline of benchmarks/bench_short_names.py. Params: name (lower-case), limit.
MATCH (a:Asset)
WHERE toLower(a.name) = $name
RETURN a.urn AS urn, a.name AS name, a.system AS system,
       CASE WHEN a:Table THEN 'Table' WHEN a:Dataset THEN 'Dataset' WHEN a:File THEN 'File'
            ELSE 'Asset' END AS kind,
       a.deleted_at AS deleted_at
ORDER BY a.deleted_at IS NOT NULL, a.urn
LIMIT $limit
