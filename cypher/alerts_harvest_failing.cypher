// Each system and scope whose harvests failed (or were partial) since its last successful one:
// the harvest-failing alert rule. Returns the last success (null: never), the first and last
// failure since, how many, and each failure's [finished, status, error].
MATCH (h:HarvestRun)
WHERE h.status IN ['success', 'failed', 'partial']
WITH h.system AS system, h.scope AS scope,
     max(CASE WHEN h.status = 'success' THEN h.finished END) AS last_success
MATCH (f:HarvestRun)
WHERE f.system = system AND f.scope = scope AND f.status IN ['failed', 'partial']
  AND (last_success IS NULL OR f.finished > last_success)
RETURN system, scope, last_success, min(f.finished) AS since, max(f.finished) AS last_failure,
       count(f) AS failures, collect([f.finished, f.status, f.error]) AS failed
ORDER BY system, scope
