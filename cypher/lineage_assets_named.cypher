// Assets whose short name is this name, case-insensitively (a user typing `orders`), present
// ones first: an asset's whole name, or a dotted tail of the name of a system whose names are
// dotted table names (`orders`, `main.orders` for `shop.main.orders` on duckdb, postgres,
// bigquery, spark...); paths and Snowflake names are whole (identity.WHOLE_NAME_SYSTEMS).
// Params: name (lower-case), dotted ('.' + name), whole_name_systems (list), limit.
// One scan of :Asset, as the whole-name lookup was; the name is lower-cased once per asset.
MATCH (a:Asset)
WITH a, toLower(a.name) AS name
WHERE name = $name OR (name ENDS WITH $dotted AND NOT a.system IN $whole_name_systems)
RETURN a.urn AS urn, a.name AS name, a.system AS system,
       CASE WHEN a:Table THEN 'Table' WHEN a:Dataset THEN 'Dataset' WHEN a:File THEN 'File'
            ELSE 'Asset' END AS kind,
       a.deleted_at AS deleted_at
ORDER BY a.deleted_at IS NOT NULL, a.urn
LIMIT $limit
