// Store datasets' rolled-up counters: objects, bytes, objects_<CLASS>, bytes_<CLASS> (flat, as
// every backend stores only scalar properties). Rows: {urn, props}.
UNWIND $rows AS r
MATCH (d:Asset {urn: r.urn})
SET d += r.props
