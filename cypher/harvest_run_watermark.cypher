// The watermark of the newest successful harvest of a system and scope.
MATCH (h:HarvestRun {system: $system, scope: $scope})
WHERE h.status = 'success' AND h.watermark IS NOT NULL
RETURN h.watermark AS watermark
ORDER BY h.finished DESC
LIMIT 1
