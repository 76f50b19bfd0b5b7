// One asset as the explorer's asset page shows it: its labels and every property stored on it.
// Params: urn.
MATCH (a:Asset {urn: $urn})
RETURN labels(a) AS labels, properties(a) AS properties
