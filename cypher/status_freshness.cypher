// When each system and scope last harvested successfully.
MATCH (h:HarvestRun)
WHERE h.status = 'success'
RETURN h.system AS system, h.scope AS scope, max(h.finished) AS last_success
ORDER BY system, scope
