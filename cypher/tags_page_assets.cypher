// One page of the assets, for deriving every tag of the graph at once: internal id, urn and
// deletion of the assets with ids in [$from, $to). Paging by id is a seek on the embedded
// store (see store_raw_nodes), where millions of urn look-ups would take minutes; integers
// and strings only, so the reply is read without types (GraphStore.read, plain).
// Params: from, to.
MATCH (a:Asset)
WHERE id(a) >= $from AND id(a) < $to
RETURN id(a) AS id, a.urn AS urn, a.deleted_at AS deleted_at
