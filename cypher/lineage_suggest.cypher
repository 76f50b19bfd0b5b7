// Candidates for a name that matched no asset: assets whose urn or name contains the needle,
// case-insensitively; lineagegraph.questions.lineage.suggest searches once per word typed and ranks the
// union by similarity. Params: needle (lower-case string), limit.
MATCH (a:Asset)
WHERE toLower(a.urn) CONTAINS $needle OR toLower(a.name) CONTAINS $needle
RETURN a.urn AS urn, a.name AS name, a.deleted_at AS deleted_at
LIMIT $limit
