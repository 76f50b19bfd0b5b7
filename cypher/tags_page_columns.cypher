// One page of the columns, for deriving every tag of the graph at once (see tags_page_assets):
// internal id and urn of the columns with ids in [$from, $to). Each column's asset is the urn
// before its last '#' (identity.column_urn), so no edge is read for it.
// Params: from, to.
MATCH (c:Column)
WHERE id(c) >= $from AND id(c) < $to
RETURN id(c) AS id, c.urn AS urn
