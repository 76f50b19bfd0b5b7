// One hop downstream in column lineage: one row per FEEDS edge leaving the frontier's columns,
// with the column reached, the frontier column it is reached from and the edge's
// transformations. A column of a deleted asset is not followed unless include_deleted.
// Params: frontier (list of column urns), include_deleted (bool), as_of (epoch ms or null).
// As of a time (as_of, epoch ms; null: now), an edge counts when it was first seen by then and
// was not stopped then (docs/history.md); include_deleted also follows stopped edges and
// deleted assets (first seen by then).
// Run once per level by lineagegraph.questions.lineage.column_lineage, which keeps each column once
// (see lineage_downstream_step.cypher for why that happens in Python).
UNWIND $frontier AS u
MATCH (a:Column {urn: u})-[e:FEEDS]->(b:Column)
OPTIONAL MATCH (b)-[:COLUMN_OF]->(owner:Asset)
WITH a, e, b, owner
WHERE CASE WHEN $as_of IS NULL
           THEN $include_deleted OR ((owner IS NULL OR owner.deleted_at IS NULL) AND e.retired_at IS NULL)
           ELSE e.first_seen <= $as_of
                AND ($include_deleted OR ((owner IS NULL OR owner.deleted_at IS NULL OR owner.deleted_at > $as_of)
                     AND size([s IN coalesce(e.stopped, []) WHERE s <= $as_of])
                         = size([s IN coalesce(e.resumed, []) WHERE s <= $as_of])))
      END
RETURN b.urn AS urn, a.urn AS reached_from, e.via AS via
