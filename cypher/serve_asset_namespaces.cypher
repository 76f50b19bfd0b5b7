// Marquez's namespaces of datasets: the scheme://authority of every asset present, with how
// many assets each holds and when it was first and last seen. (`file:///...` urns give
// `file://`, which lineagegraph.serve.marquez names `file`, as OpenLineage does; so with
// every bare namespace such as `bigquery`.)
MATCH (a:Asset)
WHERE a.deleted_at IS NULL
WITH split(a.urn, '/') AS p, a
RETURN p[0] + '//' + p[2] AS namespace, count(a) AS assets, min(a.first_seen) AS first_seen,
       max(a.last_seen) AS last_seen
ORDER BY namespace
