// Record a harvest as running. Params: id, system, scope, started.
CREATE (h:HarvestRun {id: $id, system: $system, scope: $scope, started: $started,
                      status: 'running'})
