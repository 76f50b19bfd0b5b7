// Store datasets' rolled-up counters: objects, bytes, objects_<CLASS>, bytes_<CLASS>, and their
// hidden cost (hidden_*: lineagegraph.harvest.s3.scan.HiddenTallies), flat, as every backend
// stores only scalar properties; a null value removes its property. Rows: {urn, props}.
UNWIND $rows AS r
MATCH (d:Asset {urn: r.urn})
SET d += r.props
