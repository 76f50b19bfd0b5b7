// A job identity and several of its runs at once (one window of a harvest, reduced).
// Rows: {urn, system, name, times (distinct run start times), first, last, last_run_id,
// last_user (of the first run at `last`)}. The same result as one merge_transformations row per
// run in time order: only runs newer than last_run_at count, so replayed windows change nothing.
UNWIND $rows AS r
MERGE (t:Transformation {urn: r.urn})
ON CREATE SET t.system = r.system, t.name = r.name, t.first_seen = r.first, t.runs = 0,
              t.last_run_at = -1
WITH t, r, r.last > t.last_run_at AS newer, size([x IN r.times WHERE x > t.last_run_at]) AS added
SET t.runs = t.runs + added,
    t.last_run_id = CASE WHEN newer THEN r.last_run_id ELSE t.last_run_id END,
    t.user = CASE WHEN newer THEN r.last_user ELSE t.user END,
    t.first_seen = CASE WHEN r.first < t.first_seen THEN r.first ELSE t.first_seen END,
    t.last_seen = CASE WHEN newer THEN r.last ELSE t.last_seen END,
    t.last_run_at = CASE WHEN newer THEN r.last ELSE t.last_run_at END
