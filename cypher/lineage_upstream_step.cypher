// One hop upstream from a frontier of assets: one row per FLOWS_TO edge entering it, with the
// asset reached, the frontier asset it is reached from and the edge's transformations. Deleted
// assets are not followed unless include_deleted.
// Params: frontier (list of urns), include_deleted (bool), as_of (epoch ms or null).
// As of a time (as_of, epoch ms; null: now), an edge counts when it was first seen by then and
// was not stopped then (docs/history.md); include_deleted also follows stopped edges and
// deleted assets (first seen by then).
// lineagegraph.questions.lineage runs this once per level and, in Python, keeps each asset once and drops
// those already seen. Measured on FalkorDB 4.16: `x IN $seen` is a linear scan and every list
// parameter is sent as text, so a growing seen-list made one hop slower than a whole search;
// and grouping rows here (collect) doubled the time of a hop. The WITH before WHERE keeps
// FalkorDB's planner from starting at b with a label scan of every asset because of the filter.
UNWIND $frontier AS u
MATCH (a:Asset {urn: u})<-[e:FLOWS_TO]-(b:Asset)
WITH a, e, b
WHERE CASE WHEN $as_of IS NULL
           THEN $include_deleted OR (b.deleted_at IS NULL AND e.retired_at IS NULL)
           ELSE e.first_seen <= $as_of
                AND ($include_deleted OR ((b.deleted_at IS NULL OR b.deleted_at > $as_of)
                     AND size([s IN coalesce(e.stopped, []) WHERE s <= $as_of])
                         = size([s IN coalesce(e.resumed, []) WHERE s <= $as_of])))
      END
RETURN b.urn AS urn, a.urn AS reached_from, e.via AS via
