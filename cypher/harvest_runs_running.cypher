// The runs of one system and scope still recorded as running, with who runs them.
// Params: system, scope.
MATCH (h:HarvestRun {system: $system, scope: $scope})
WHERE h.status = 'running'
RETURN h.id AS id, h.status AS status, h.host AS host, h.pid AS pid, h.pid_start AS pid_start
