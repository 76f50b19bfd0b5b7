// Set the run times of transformations after a window (lineagegraph.graph.history).
// Rows: {urn, run_times, column_run_times (ascending lists or null)}.
UNWIND $rows AS r
MATCH (t:Transformation {urn: r.urn})
SET t.run_times = r.run_times, t.column_run_times = r.column_run_times
