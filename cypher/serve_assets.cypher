// The assets with these exact urns and what the Marquez-compatible API shows of them.
// Params: urns (list of asset urns).
UNWIND $urns AS u
MATCH (a:Asset {urn: u})
RETURN a.urn AS urn, a.name AS name, a.system AS system,
       CASE WHEN a:Table THEN 'Table' WHEN a:Dataset THEN 'Dataset' WHEN a:File THEN 'File'
            ELSE 'Asset' END AS kind,
       a.first_seen AS first_seen, a.last_seen AS last_seen, a.deleted_at AS deleted_at
