// S3 Inventory roll-ups (:Rollup, tallied by Spark per dataset, storage class and access tier:
// `harvest s3-inventory --spark`) with their status ('orphaned', 'consumed', 'excluded'), for the
// orphan and cost reports, in the shape of orphans_usage's rows: one row per roll-up, not summed
// here (lineagegraph.reports.tally sums the rows of a key, which two roll-ups share only when
// a consumed dataset has excluded and other objects of one class). Kept apart from the objects'
// statement because roll-ups need none of its per-object work: their exclusions were settled
// when they were harvested, and no object of theirs is consumed on its own.
// A roll-up stops counting when a later harvest of its scope replaces it (its deleted_at);
// --include-deleted does not bring it back (its objects live on in the newer roll-ups).
// Params: as_of (epoch ms); datasets (as orphans_usage's; covered and last are used);
// with_consumed (true: every roll-up, false: orphaned ones only).
// Its values are strings, integers and nulls only: read `plain` (GraphStore.read).
UNWIND $datasets AS x
MATCH (d:Asset:Dataset {urn: x.dataset})
// The WITH keeps FalkorDB 4.16 from planning the next MATCH as a scan of every node.
WITH x, d
MATCH (r)-[:ROLLUP_OF]->(d)
WHERE r.first_seen <= $as_of AND (r.deleted_at IS NULL OR r.deleted_at > $as_of)
WITH x, r,
     CASE WHEN x.covered THEN 'consumed' WHEN r.excluded THEN 'excluded' ELSE 'orphaned' END
       AS status
WHERE $with_consumed OR status = 'orphaned'
RETURN x.bucket AS bucket, x.dataset AS dataset, null AS object,
       coalesce(r.storage_class, 'STANDARD') + coalesce('/' + r.access_tier, '') AS storage_class,
       status, 'rollup' AS harvested_as, r.objects AS objects, r.bytes AS bytes,
       r.small_objects AS small_objects, r.small_bytes AS small_bytes,
       r.oldest_modified AS oldest_modified, r.newest_modified AS newest_modified,
       x.last AS last_read
