// The drops of assets a window dropped or sighted (lineagegraph.graph.history), with the drops
// kept for each while it was not known yet (:PendingDrop) and its presence as derived before.
// `known`: the asset is in the graph. Params: urns (asset urns).
UNWIND $urns AS u
OPTIONAL MATCH (a:Asset {urn: u})
OPTIONAL MATCH (p:PendingDrop {urn: u})
WITH u, a, collect(p.at) AS pending
RETURN u AS urn, a IS NOT NULL AS known, a.first_seen AS first_seen, a.last_seen AS last_seen,
       a.drops AS drops, a.deleted AS deleted, a.restored AS restored,
       a.deleted_at AS deleted_at, pending
