// The most recent harvest runs, newest first. Params: limit.
MATCH (h:HarvestRun)
RETURN h.system AS system, h.scope AS scope, h.status AS status, h.started AS started,
       h.finished AS finished, h.watermark AS watermark, h.error AS error
ORDER BY h.started DESC
LIMIT $limit
