// A job identity and its latest run. Rows: {urn, system, name, run_id, run_at, user}.
// Only a run newer than last_run_at counts, so replaying an overlap window changes nothing.
UNWIND $rows AS r
MERGE (t:Transformation {urn: r.urn})
ON CREATE SET t.system = r.system, t.name = r.name, t.first_seen = r.run_at, t.runs = 0,
              t.last_run_at = -1
WITH t, r, r.run_at > t.last_run_at AS newer
SET t.runs = CASE WHEN newer THEN t.runs + 1 ELSE t.runs END,
    t.last_run_id = CASE WHEN newer THEN r.run_id ELSE t.last_run_id END,
    t.user = CASE WHEN newer THEN r.user ELSE t.user END,
    t.first_seen = CASE WHEN r.run_at < t.first_seen THEN r.run_at ELSE t.first_seen END,
    t.last_seen = CASE WHEN newer THEN r.run_at ELSE t.last_seen END,
    t.last_run_at = CASE WHEN newer THEN r.run_at ELSE t.last_run_at END
