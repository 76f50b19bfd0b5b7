// One hop downstream in column lineage: one row per FEEDS edge leaving the frontier's columns,
// with the column reached, the frontier column it is reached from and the edge's
// transformations. A column of a deleted asset is not followed unless include_deleted.
// Params: frontier (list of column urns), include_deleted (bool).
// Run once per level by lineagegraph.questions.lineage.column_lineage, which keeps each column once
// (see lineage_downstream_step.cypher for why that happens in Python).
UNWIND $frontier AS u
MATCH (a:Column {urn: u})-[e:FEEDS]->(b:Column)
OPTIONAL MATCH (b)-[:COLUMN_OF]->(owner:Asset)
WITH a, e, b, owner
WHERE $include_deleted OR owner IS NULL OR owner.deleted_at IS NULL
RETURN b.urn AS urn, a.urn AS reached_from, e.via AS via
