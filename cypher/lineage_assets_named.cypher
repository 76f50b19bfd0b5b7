// Assets whose short name is this name, case-insensitively (a user typing `orders`), present
// ones first. Params: name (lower-case), limit.
MATCH (a:Asset)
WHERE toLower(a.name) = $name
RETURN a.urn AS urn, a.name AS name, a.system AS system,
       CASE WHEN a:Table THEN 'Table' WHEN a:Dataset THEN 'Dataset' WHEN a:File THEN 'File'
            ELSE 'Asset' END AS kind,
       a.deleted_at AS deleted_at
ORDER BY a.deleted_at IS NOT NULL, a.urn
LIMIT $limit
