// The property names of datasets, to find per-class rollup counters that must drop to zero.
// Params: urns.
UNWIND $urns AS urn
MATCH (d:Asset {urn: urn})
RETURN d.urn AS dataset, keys(d) AS keys
