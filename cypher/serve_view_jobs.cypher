// The assets among these urns that receive lineage without a transformation (a FLOWS_TO with an
// empty `via`, e.g. a Snowflake view from its OBJECT_DEPENDENCIES): the Marquez-compatible API
// shows each as a job named after the asset (lineagegraph.serve.marquez), first and last seen
// as those edges were.
// Params: urns (list of asset urns).
UNWIND $urns AS u
MATCH (v:Asset {urn: u})<-[g:FLOWS_TO]-(:Asset)
WHERE coalesce(size(g.via), 0) = 0
RETURN v.urn AS urn, v.system AS system, v.deleted_at AS deleted_at,
       min(g.first_seen) AS first_seen, max(g.last_seen) AS last_seen
