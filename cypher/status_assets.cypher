// Assets by kind and system, for `lineagegraph status`: present and soft-deleted counts.
MATCH (n:Asset)
RETURN CASE WHEN n:Table THEN 'Table' WHEN n:Dataset THEN 'Dataset' WHEN n:File THEN 'File'
       ELSE 'Asset' END AS kind,
       n.system AS system,
       count(CASE WHEN n.deleted_at IS NULL THEN 1 END) AS assets,
       count(n.deleted_at) AS deleted
ORDER BY kind, system
