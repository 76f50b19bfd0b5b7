// One page of a job's OpenLineage runs (:Run), newest start first, for Marquez's RunList.
// Params: urn (transformation urn), skip, limit.
MATCH (run:Run)-[:RUN_OF]->(:Transformation {urn: $urn})
RETURN run.id AS id, run.state AS state, run.started AS started, run.at AS at,
       run.terminal AS terminal
ORDER BY started DESC, id
SKIP $skip
LIMIT $limit
