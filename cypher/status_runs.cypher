// The most recent harvest runs, newest first, with who ran them. Params: limit.
MATCH (h:HarvestRun)
RETURN h.system AS system, h.scope AS scope, h.status AS status, h.started AS started,
       h.finished AS finished, h.watermark AS watermark, h.error AS error, h.host AS host,
       h.pid AS pid, h.pid_start AS pid_start
ORDER BY h.started DESC
LIMIT $limit
