// The harvest runs of one system that started at or after a time, oldest first, with all their
// counters (count_*). Params: system, since (epoch ms).
MATCH (h:HarvestRun)
WHERE h.system = $system AND h.started >= $since
RETURN properties(h) AS run
ORDER BY h.started
