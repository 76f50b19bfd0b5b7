// Soft-delete objects a DROP removed. Rows: {urn, at}. An object seen after the drop (recreated,
// or a replayed window's later query) stays present; a replayed drop changes nothing.
// `deleted` keeps every deletion time (an asset that comes back gets one in `restored`).
UNWIND $rows AS r
MATCH (n:Asset {urn: r.urn})
WHERE n.deleted_at IS NULL AND n.last_seen <= r.at
SET n.deleted_at = r.at,
    n.changed_at = CASE WHEN n.changed_at >= r.at THEN n.changed_at ELSE r.at END,
    n.deleted = coalesce(n.deleted, []) + [r.at]
