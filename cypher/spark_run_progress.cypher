// Counters of a harvest that runs as long as its Spark application, saved as it goes.
// Params: id, counts (flat map of integers).
MATCH (h:HarvestRun {id: $id})
SET h += $counts
