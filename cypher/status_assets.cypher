// Present assets by kind and system, for `lineagegraph status`.
MATCH (n:Asset)
WHERE n.deleted_at IS NULL
RETURN CASE WHEN n:Table THEN 'Table' WHEN n:Dataset THEN 'Dataset' WHEN n:File THEN 'File'
       ELSE 'Asset' END AS kind,
       n.system AS system, count(n) AS assets
ORDER BY kind, system
