// The harvest runs of one system that one process (host, pid) started at or after a time,
// oldest first, with all their counters (count_*). Params: system, since (epoch ms), host, pid.
MATCH (h:HarvestRun)
WHERE h.system = $system AND h.started >= $since AND h.host = $host AND h.pid = $pid
RETURN properties(h) AS run
ORDER BY h.started
