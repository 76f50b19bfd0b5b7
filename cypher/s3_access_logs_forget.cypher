// Forget the counted log files of a scope delivered before `before`: no later harvest reads
// them again (it starts at its watermark less the overlap), so their marks only cost space.
// Params: scope (the harvested location), before (epoch ms).
MATCH (m:S3AccessLog)
WHERE m.scope = $scope AND m.delivered < $before
DELETE m
RETURN count(*) AS forgotten
