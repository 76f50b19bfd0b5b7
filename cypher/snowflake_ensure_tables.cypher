// :Asset:Table nodes that OBJECT_DEPENDENCIES names, created when missing but never marked seen:
// a dependency row outlives a DROP, so it must not undelete an object or move its last_seen.
// Rows: {urn, system, name, seen, props}.
UNWIND $rows AS r
MERGE (n:Asset:Table {urn: r.urn})
ON CREATE SET n += r.props, n.system = r.system, n.name = r.name, n.first_seen = r.seen,
              n.last_seen = r.seen
