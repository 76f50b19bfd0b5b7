// One page of the columns, for deriving every tag of the graph at once (see tags_page_assets):
// internal id, urn and the internal id of its asset, for the columns with ids in [$from, $to).
// Params: from, to.
MATCH (c:Column)-[:COLUMN_OF]->(a:Asset)
WHERE id(c) >= $from AND id(c) < $to
RETURN id(c) AS id, c.urn AS urn, id(a) AS asset
