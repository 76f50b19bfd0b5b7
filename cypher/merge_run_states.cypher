// (:Run {id})-[:RUN_OF]->(:Transformation): each OpenLineage run and its state, for the
// run-never-finished and run-failed alerts. Rows: {job, system, name, run_id, state, at,
// terminal}. A terminal state (COMPLETE, FAIL, ABORT) wins over START and RUNNING whatever their
// times, else the newer event; `started` is the run's earliest event. Replayed or late events
// change nothing they should not. A job seen first here gets the defaults merge_transformations
// and merge_job_runs count on; a job's first_seen is its earliest event of any kind.
UNWIND $rows AS r
MERGE (t:Transformation {urn: r.job})
ON CREATE SET t.system = r.system, t.name = r.name, t.first_seen = r.at, t.runs = 0,
              t.last_run_at = -1
SET t.first_seen = CASE WHEN r.at < t.first_seen THEN r.at ELSE t.first_seen END
WITH t, r
MERGE (run:Run {id: r.run_id})
ON CREATE SET run.job = r.job, run.state = r.state, run.at = r.at, run.started = r.at,
              run.terminal = r.terminal
WITH t, run, r,
     (r.terminal AND NOT run.terminal) OR (r.terminal = run.terminal AND r.at > run.at) AS newer
SET run.state = CASE WHEN newer THEN r.state ELSE run.state END,
    run.at = CASE WHEN newer THEN r.at ELSE run.at END,
    run.terminal = run.terminal OR r.terminal,
    run.started = CASE WHEN r.at < run.started THEN r.at ELSE run.started END
MERGE (run)-[:RUN_OF]->(t)
