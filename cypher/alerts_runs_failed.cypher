// Jobs whose latest ended run (by start) ended in FAIL or ABORT: the run-failed alert rule. A
// later run that completes resolves it.
MATCH (run:Run)-[:RUN_OF]->(t:Transformation)
WHERE run.terminal
WITH t, max(run.started) AS newest
MATCH (last:Run)-[:RUN_OF]->(t)
WHERE last.terminal AND last.started = newest AND last.state IN ['FAIL', 'ABORT']
RETURN t.urn AS job, t.name AS name, last.id AS run_id, last.state AS state,
       last.started AS started, last.at AS at
ORDER BY job, run_id
