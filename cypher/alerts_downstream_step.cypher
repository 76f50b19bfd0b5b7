// One hop downstream from the frontiers of several searches at once: the alert rules' folding
// and blast radii search from every alert's asset together, one statement per level. One row
// per FLOWS_TO edge that holds now into a present asset (as lineage_downstream_step now,
// without deleted assets), with the search whose frontier it leaves.
// Params: rows (list of {search: int, urn: frontier asset urn}).
UNWIND $rows AS r
MATCH (a:Asset {urn: r.urn})-[e:FLOWS_TO]->(b:Asset)
WITH r, e, b
WHERE b.deleted_at IS NULL AND e.retired_at IS NULL
RETURN r.search AS search, b.urn AS urn
