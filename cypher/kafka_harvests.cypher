// The newest finished harvest of each Kafka consumer group (its scope: brokers and group), with
// the messages it consumed, dead-lettered and committed and the lag it left. Params: system.
MATCH (h:HarvestRun)
WHERE h.system = $system AND h.finished IS NOT NULL
WITH h ORDER BY h.finished DESC
WITH h.scope AS scope, collect(h)[0] AS h
RETURN scope, h.status AS status, h.finished AS finished,
       h.count_messages_consumed AS consumed, h.count_messages_dead_lettered AS dead_lettered,
       h.count_messages_committed AS committed, h.count_lag AS lag
ORDER BY scope
