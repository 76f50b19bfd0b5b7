// The FLOWS_TO paths from one asset to another, shortest first, for `lineagegraph path`.
// Params: src, dst (urns), depth (<= 20, the fixed bound below: neither Neo4j nor FalkorDB
// accepts a parameter there), include_deleted (bool), limit, as_of (epoch ms or null: now; as
// in lineage_downstream_step, every hop must hold then).
// This enumerates paths, so lineagegraph.questions.lineage.paths runs it only after a level-by-level
// search has found dst within depth hops of src. FalkorDB sorts by a path's length only once
// the path is projected: hence `WITH p, length(p) AS hops`.
MATCH p = (:Asset {urn: $src})-[:FLOWS_TO*1..20]->(:Asset {urn: $dst})
WHERE length(p) <= $depth
  AND ($include_deleted OR all(n IN nodes(p) WHERE n.deleted_at IS NULL OR n.deleted_at > $as_of))
  AND all(e IN relationships(p) WHERE
          CASE WHEN $as_of IS NULL THEN $include_deleted OR e.retired_at IS NULL
               ELSE e.first_seen <= $as_of
                    AND ($include_deleted
                         OR size([s IN coalesce(e.stopped, []) WHERE s <= $as_of])
                            = size([s IN coalesce(e.resumed, []) WHERE s <= $as_of]))
          END)
WITH p, length(p) AS hops
ORDER BY hops
LIMIT $limit
RETURN hops,
       [n IN nodes(p) | {urn: n.urn, name: n.name, system: n.system,
                         kind: CASE WHEN n:Table THEN 'Table' WHEN n:Dataset THEN 'Dataset'
                                    WHEN n:File THEN 'File' ELSE 'Asset' END}] AS assets,
       [r IN relationships(p) | r.via] AS vias
