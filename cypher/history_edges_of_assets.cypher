// The runs that read or wrote assets (lineagegraph.graph.history): per READS_FROM and
// WRITES_TO edge its intervals and its transformation's run times, every run within an
// interval being a sighting of the asset (where it comes back after a drop).
// Params: urns (asset urns).
UNWIND $urns AS u
MATCH (t:Transformation)-[e:READS_FROM|WRITES_TO]->(:Asset {urn: u})
WHERE e.held_from IS NOT NULL
RETURN u AS urn, e.held_from AS held_from, e.held_until AS held_until, t.run_times AS runs
