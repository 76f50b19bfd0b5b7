// The job-less part of one level of the Marquez-compatible lineage graph
// (lineagegraph.serve.marquez): lineage recorded without a transformation (FLOWS_TO with an
// empty `via`, e.g. a Snowflake view's OBJECT_DEPENDENCIES) is shown as one job per asset that
// receives it, named after that asset; the job reads the asset's job-less upstreams and writes
// the asset. A frontier asset touches such a job as its target or as one of its inputs. Returns
// each job not yet seen (`views`, the target urns already in the answer), whether its target
// is shown and the inputs shown; deleted assets are left out unless include_deleted, but a
// frontier asset always counts (as in serve_lineage_level).
// Params: urns (frontier asset urns), views (target urns of the jobs already found),
// include_deleted, as_of.
// As of a time (as_of, epoch ms; null: now) only the edges that held then count
// (docs/history.md); include_deleted counts those that had stopped too.
UNWIND $urns AS u
MATCH (a:Asset {urn: u})
OPTIONAL MATCH (a)-[f:FLOWS_TO]->(d:Asset)
WHERE coalesce(size(f.via), 0) = 0
  AND CASE WHEN $as_of IS NULL THEN $include_deleted OR f.retired_at IS NULL
           ELSE f.first_seen <= $as_of
                AND ($include_deleted
                     OR size([s IN coalesce(f.stopped, []) WHERE s <= $as_of])
                        = size([s IN coalesce(f.resumed, []) WHERE s <= $as_of])) END
WITH a, collect(d) AS targets
UNWIND targets + [a] AS v
WITH DISTINCT v
WHERE NOT v.urn IN $views
MATCH (v)<-[g:FLOWS_TO]-(b:Asset)
WHERE coalesce(size(g.via), 0) = 0
  AND CASE WHEN $as_of IS NULL THEN $include_deleted OR g.retired_at IS NULL
           ELSE g.first_seen <= $as_of
                AND ($include_deleted
                     OR size([s IN coalesce(g.stopped, []) WHERE s <= $as_of])
                        = size([s IN coalesce(g.resumed, []) WHERE s <= $as_of])) END
WITH v, collect(DISTINCT CASE WHEN $include_deleted OR b.deleted_at IS NULL OR b.urn IN $urns
                             THEN b.urn END) AS reads
RETURN v.urn AS view, ($include_deleted OR v.deleted_at IS NULL OR v.urn IN $urns) AS shown,
       reads
