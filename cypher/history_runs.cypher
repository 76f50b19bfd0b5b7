// The run times of transformations (lineagegraph.graph.history): every run (`run_times`) and
// those that told column lineage (`column_run_times`), which a window merges its runs into.
// Params: urns (transformation urns).
UNWIND $urns AS u
MATCH (t:Transformation {urn: u})
RETURN t.urn AS urn, t.run_times AS run_times, t.column_run_times AS column_run_times
