// The hidden cost the S3 harvester stored on datasets (noncurrent versions, delete markers,
// incomplete multipart uploads: properties hidden_*, see lineagegraph.harvest.s3.scan
// .HiddenTallies), for the cost report's rows of their own (lineagegraph.reports.tally
// .hidden_records). Figures are the newest complete scan's; a dataset scanned after $as_of has
// none. Params: datasets (urns), as_of (epoch ms).
UNWIND $datasets AS urn
MATCH (d:Asset:Dataset {urn: urn})
WHERE d.hidden_seen IS NOT NULL AND d.hidden_seen <= $as_of
RETURN d.urn AS dataset, properties(d) AS props
