// Snowflake assets whose urn ends in a given /DB.SCHEMA.NAME, for names typed without an
// account set in settings. Params: suffix ('/DB.SCHEMA.NAME'), limit.
MATCH (a:Asset)
WHERE a.system = 'snowflake' AND a.urn ENDS WITH $suffix
RETURN a.urn AS urn
ORDER BY urn
LIMIT $limit
