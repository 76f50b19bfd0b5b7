// The datasets under a scope that hold hidden cost (noncurrent versions, delete markers,
// incomplete multipart uploads: properties `hidden_*`, docs/s3.md "Hidden cost"), so that a
// complete scan of the scope removes what it no longer finds. Params: root (`s3://bucket/prefix`).
MATCH (d:Asset:Dataset)
WHERE d.urn STARTS WITH $root AND d.hidden_seen IS NOT NULL
RETURN d.urn AS dataset
