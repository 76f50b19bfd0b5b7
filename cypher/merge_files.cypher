// Upsert :Asset:File nodes. Rows: {urn, system, name, seen, props}. A node seen again after its
// soft delete is present again; an older sighting (a replayed window, an inventory older than the
// first listing) lowers first_seen but neither undeletes it, nor moves last_seen, nor
// overwrites the properties of the newer sighting.
// New nodes take only the ON CREATE branch: ~1.5x faster on FalkorDB than one SET for both.
// A urn another kind of asset holds stays that asset's (the row is skipped): the embedded
// store has no unique constraint to refuse it.
UNWIND $rows AS r
OPTIONAL MATCH (clash:Asset {urn: r.urn})
WHERE NOT clash:File
WITH r, clash
WHERE clash IS NULL
MERGE (n:Asset:File {urn: r.urn})
ON CREATE SET n += r.props, n.system = r.system, n.name = r.name, n.first_seen = r.seen,
              n.changed_at = r.seen, n.last_seen = r.seen
ON MATCH SET n += CASE WHEN r.seen >= n.last_seen THEN r.props ELSE {} END,
    n.first_seen = CASE WHEN r.seen < n.first_seen THEN r.seen ELSE n.first_seen END,
    n.changed_at = CASE WHEN n.deleted_at IS NOT NULL AND r.seen >= n.deleted_at
                          AND coalesce(n.changed_at, 0) < r.seen THEN r.seen ELSE n.changed_at END,
    n.restored = CASE WHEN n.deleted_at IS NOT NULL AND r.seen >= n.deleted_at
                      THEN coalesce(n.restored, []) + [r.seen] ELSE n.restored END,
    n.deleted_at = CASE WHEN n.deleted_at IS NOT NULL AND r.seen < n.deleted_at
                        THEN n.deleted_at ELSE null END,
    n.last_seen = CASE WHEN r.seen > n.last_seen THEN r.seen ELSE n.last_seen END
