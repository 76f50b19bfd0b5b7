// :Asset:Table nodes that OBJECT_DEPENDENCIES names, created when missing but never marked seen:
// a dependency row outlives a DROP, so it must not undelete an object or move its last_seen.
// Rows: {urn, system, name, seen, props}.
// A urn another kind of asset holds stays that asset's (the row is skipped): the embedded
// store has no unique constraint to refuse it.
UNWIND $rows AS r
OPTIONAL MATCH (clash:Asset {urn: r.urn})
WHERE NOT clash:Table
WITH r, clash
WHERE clash IS NULL
MERGE (n:Asset:Table {urn: r.urn})
ON CREATE SET n += r.props, n.system = r.system, n.name = r.name, n.first_seen = r.seen,
              n.changed_at = r.seen, n.last_seen = r.seen
