// Set assets' drops and the presence derived from them (lineagegraph.graph.history): every
// deletion (`deleted`), return (`restored`), the current deletion (`deleted_at`, null while
// there), raising `changed_at` to the newest of first_seen, deletions and returns (it also
// covers the lineage edges leaving the asset, so it is never lowered); the drops kept while
// each was not known are now its own. Rows: {urn, drops, deleted, restored (lists or null),
// deleted_at, changed_at}.
UNWIND $rows AS r
MATCH (a:Asset {urn: r.urn})
SET a.drops = r.drops, a.deleted = r.deleted, a.restored = r.restored,
    a.deleted_at = r.deleted_at,
    a.changed_at = CASE WHEN a.changed_at >= r.changed_at THEN a.changed_at ELSE r.changed_at END
WITH r
MATCH (p:PendingDrop {urn: r.urn})
DELETE p
