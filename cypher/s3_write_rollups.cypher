// Write the roll-ups of an S3 Inventory tallied by Spark: one :Rollup per dataset, storage class,
// access tier and exclusion, ROLLUP_OF its dataset (written first). The tallies are
// lineagegraph.values.pricing.Tally's; `excludes` are the exclusion globs they were split by.
// Rows: {dataset, storage_class, access_tier, excluded, objects, bytes, small_objects,
// small_bytes, oldest_modified, newest_modified}; params: rows, bucket, prefix, seen, excludes.
UNWIND $rows AS r
MATCH (d:Asset:Dataset {urn: r.dataset})
CREATE (n:Rollup)-[:ROLLUP_OF]->(d)
SET n.bucket = $bucket, n.prefix = $prefix, n.first_seen = $seen, n.excludes = $excludes,
    n.storage_class = r.storage_class, n.access_tier = r.access_tier, n.excluded = r.excluded,
    n.objects = r.objects, n.bytes = r.bytes, n.small_objects = r.small_objects,
    n.small_bytes = r.small_bytes, n.oldest_modified = r.oldest_modified,
    n.newest_modified = r.newest_modified
RETURN count(n) AS written
