// S3 objects held one by one (:File) per bucket, dataset, storage class and status ('orphaned',
// 'consumed', 'excluded') for the orphan and cost reports (docs/orphans.md), tallied for
// lineagegraph.values.pricing: objects, bytes, and the objects under $small bytes with their
// bytes. A dataset's roll-ups (an S3 Inventory tallied by Spark) are orphans_rollup_usage's.
// Consumption comes settled per dataset (few), not per object (many), in $datasets:
// lineagegraph.reports.tally.usage_records works it out from orphans_consumed_assets (a dataset
// is `covered` when an edge consumes it or an asset above it, `last` is the latest read of those,
// `own` its objects consumed on their own, matched within their dataset only).
// Params: as_of (epoch ms); datasets (rows {bucket, dataset: urn, covered, last, own: [{urn,
// live, last}]}, from orphans_datasets); include_deleted, with_consumed (true: every object,
// false: orphaned ones only); exclude (glob matchers from lineagegraph.values.globs);
// small (pricing.SMALL_OBJECT_BYTES); by_object (true: a row per :File, its urn in `object`).
// Its values are strings, integers and nulls only: read `plain` (GraphStore.read).

// 1. The datasets given, each with its consumption (see above).
UNWIND $datasets AS x
MATCH (d:Asset:Dataset {urn: x.dataset})
WITH d, x.bucket AS bucket, x.own AS own, x.covered AS covered, x.last AS dataset_last,
     size(x.bucket) + 6 AS key_at  // where keys start in urns: after s3://bucket/

// 2. The present objects of those datasets, each with its status and last read.
MATCH (f)-[:PART_OF]->(d)
WHERE f.first_seen <= $as_of
  AND ($include_deleted OR f.deleted_at IS NULL OR f.deleted_at > $as_of)
// An object's key is its urn after `s3://bucket/` (the :File stores it once, in the urn).
// Every substring() here gives its length: FalkorDB 4.16 counts a missing one in bytes and then
// walks that many characters, past the end of a string holding any multi-byte character.
WITH d, bucket, own, covered, dataset_last, f,
     substring(f.urn, key_at, size(f.urn) - key_at) AS key
WITH d, bucket, f,
     coalesce(f.storage_class, 'STANDARD') + coalesce('/' + f.access_tier, '') AS storage_class,
     reduce(m = dataset_last, x IN own | CASE WHEN x.urn = f.urn AND (m IS NULL OR x.last > m)
                                              THEN x.last ELSE m END) AS last_read,
     CASE WHEN covered OR any(x IN own WHERE x.urn = f.urn AND x.live) THEN 'consumed'
     WHEN f.excluded THEN 'excluded'
     // The exclusion globs: plain string tests for the common shapes, else the block matcher
     // (see lineagegraph.values.globs); `needle` keeps both off most keys.
     WHEN any(g IN $exclude WHERE key CONTAINS g.needle AND (
       coalesce(key = g.equals OR key STARTS WITH g.starts OR key ENDS WITH g.ends
                OR key CONTAINS g.contains, false)
       OR (g.general AND any(s IN [split(key, '/')] WHERE
         reduce(pos = 0, b IN g.blocks | coalesce(head([i IN
             // Where the block may start: 'exact' yields [0] only when the key has exactly the
             // block's segments (a range from a positive bound down to 0 is empty).
             CASE b.anchor WHEN 'float' THEN range(pos, size(s) - size(b.segments))
                           WHEN 'end' THEN [size(s) - size(b.segments)]
                           WHEN 'exact' THEN range(size(s) - size(b.segments), 0)
                           ELSE [0] END
           WHERE i >= pos AND i + size(b.segments) <= size(s)
             // Each segment pattern (its '*'-split pieces) matches the key's segment there.
             AND all(j IN range(0, size(b.segments) - 1) WHERE
               (size(b.segments[j]) = 1 AND s[i + j] = b.segments[j][0])
               // With '*': starts with the first piece, ends with the last, and the middle
               // pieces follow in order (each at its first place) leaving room for the last.
               OR (size(b.segments[j]) > 1
                   AND s[i + j] STARTS WITH b.segments[j][0]
                   AND s[i + j] ENDS WITH last(b.segments[j])
                   AND size(reduce(rest = substring(s[i + j], size(b.segments[j][0]),
                                           coalesce(size(s[i + j]) - size(b.segments[j][0]), 0)),
                                   piece IN b.segments[j][1..size(b.segments[j]) - 1] |
                                   CASE WHEN rest CONTAINS piece THEN substring(
                                       rest, size(split(rest, piece)[0]) + size(piece),
                                       coalesce(size(rest) - size(split(rest, piece)[0])
                                                - size(piece), 0))
                                   END))
                       >= size(last(b.segments[j]))))]) + size(b.segments),
             size(s) + 1))
         + g.rest <= size(s))))) THEN 'excluded'
     ELSE 'orphaned' END AS status
WHERE $with_consumed OR status = 'orphaned'
// toInteger: FalkorDB sums integers as a double and sends it with 15 significant digits, which
// rounds a petabyte; as an integer it is exact up to 2^53 bytes (8 PiB) per row.
WITH d, bucket, storage_class, status, CASE WHEN $by_object THEN f.urn END AS object,
     count(f) AS objects,
     toInteger(sum(f.size)) AS bytes,
     count(CASE WHEN f.size < $small THEN f END) AS small_objects,
     toInteger(sum(CASE WHEN f.size < $small THEN f.size ELSE 0 END)) AS small_bytes,
     min(f.last_modified) AS oldest_modified,
     max(f.last_modified) AS newest_modified,
     max(last_read) AS last_read
RETURN bucket, d.urn AS dataset, object, storage_class, status,
       'object' AS harvested_as, objects, bytes, small_objects, small_bytes, oldest_modified,
       newest_modified, last_read
ORDER BY bucket, dataset, object, storage_class, status
