// Record a harvest as running, with who runs it (host, pid, and the process start time, which
// tells a live process from a reused pid). Params: id, system, scope, started, host, pid,
// pid_start.
CREATE (h:HarvestRun {id: $id, system: $system, scope: $scope, started: $started,
                      status: 'running', host: $host, pid: $pid, pid_start: $pid_start})
