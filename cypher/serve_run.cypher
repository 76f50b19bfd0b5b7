// An OpenLineage run (:Run) by id and its job, for Marquez's GET /api/v1/jobs/runs/{id}.
// Params: id (run id).
MATCH (run:Run {id: $id})-[:RUN_OF]->(t:Transformation)
RETURN t.urn AS job, t.name AS name, run.id AS id, run.state AS state,
       run.started AS started, run.at AS at, run.terminal AS terminal
