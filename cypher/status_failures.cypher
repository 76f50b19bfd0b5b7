// When each system and scope last finished a harvest that failed or was partial (some rows
// refused): with status_freshness's last success, whether a source is failing now.
MATCH (h:HarvestRun)
WHERE h.status IN ['failed', 'partial']
RETURN h.system AS system, h.scope AS scope, max(h.finished) AS last_failure
ORDER BY system, scope
