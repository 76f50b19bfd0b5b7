// Whether the graph holds any asset at all: a question that found nothing says "harvest first"
// instead of "no asset matches" when the graph is empty. Params: none.
MATCH (a:Asset)
RETURN a.urn AS urn
LIMIT 1
