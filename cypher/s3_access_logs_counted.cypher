// Which of these log files (S3 access logs, CloudTrail) a harvest has already counted.
// Params: keys (list of log file locations).
UNWIND $keys AS k
MATCH (m:S3AccessLog {key: k})
RETURN m.key AS key
