// The assets with these exact urns (deleted ones too: the caller decides), for resolving what a
// user typed, checking where a traversal starts and describing what it reached.
// `first_seen`, `deleted` and `restored` say whether it was there at a time (docs/history.md).
// Params: urns (list of urns).
UNWIND $urns AS u
MATCH (a:Asset {urn: u})
RETURN a.urn AS urn, a.name AS name, a.system AS system,
       CASE WHEN a:Table THEN 'Table' WHEN a:Dataset THEN 'Dataset' WHEN a:File THEN 'File'
            ELSE 'Asset' END AS kind,
       a.deleted_at AS deleted_at, a.first_seen AS first_seen, a.deleted AS deleted,
       a.restored AS restored
