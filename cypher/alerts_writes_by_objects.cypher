// The writes of present S3 datasets as their present objects' last_modified, for the freshness
// rule: per dataset the newest and oldest object and how many.
MATCH (o:File)-[:PART_OF]->(d:Dataset)
WHERE o.deleted_at IS NULL AND d.deleted_at IS NULL AND o.last_modified IS NOT NULL
RETURN d.urn AS urn, max(o.last_modified) AS last, min(o.last_modified) AS first,
       count(o) AS writes
