// The S3 datasets the orphan and cost reports tally, in the reports' order (bucket, then urn):
// lineagegraph.reports.tally.usage_records settles each one's consumption and hands them to
// orphans_usage and orphans_rollup_usage in chunks of whole datasets, so the chunks' rows come
// back in this order.
// Params: buckets (list of names, [] = all).
MATCH (d:Asset:Dataset)
WHERE d.system = 's3' AND (size($buckets) = 0 OR split(d.urn, '/')[2] IN $buckets)
RETURN d.urn AS dataset
ORDER BY split(d.urn, '/')[2], dataset
