// The transformations with these exact urns and what the Marquez-compatible API shows of them.
// Params: urns (list of transformation urns).
UNWIND $urns AS u
MATCH (t:Transformation {urn: u})
RETURN t.urn AS urn, t.name AS name, t.system AS system, t.first_seen AS first_seen,
       t.last_seen AS last_seen, t.last_run_id AS last_run_id, t.last_run_at AS last_run_at,
       t.runs AS runs
