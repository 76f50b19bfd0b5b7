// OpenLineage runs that started (START or RUNNING) before $before and have had no COMPLETE,
// FAIL or ABORT: the run-never-finished alert rule. Params: before (epoch ms).
MATCH (run:Run)-[:RUN_OF]->(t:Transformation)
WHERE NOT run.terminal AND run.started < $before
RETURN t.urn AS job, t.name AS name, run.id AS run_id, run.state AS state,
       run.started AS started, run.at AS at
ORDER BY job, started
