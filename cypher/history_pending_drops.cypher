// Keep drops of assets not in the graph yet (lineagegraph.graph.history): a late sighting of
// the asset, older than its drop, makes it deleted then. Rows: {urn, at}.
UNWIND $rows AS r
MERGE (:PendingDrop {urn: r.urn, at: r.at})
