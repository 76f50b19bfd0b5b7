// S3 storage per bucket, dataset, storage class and status ('orphaned', 'consumed', 'excluded')
// for the orphan and cost reports (docs/orphans.md), tallied for lineagegraph.values.pricing:
// objects, bytes, and the objects under $small bytes with their bytes. A dataset's storage is its
// present objects (:File, harvested per object) and its roll-ups (:Rollup, an S3 Inventory
// tallied by Spark, with exclusions settled when it was harvested). Consumption is worked out per dataset
// (few) through its ancestors' urns, not per object (many); objects consumed on their own (a Spark
// read of one file path) come in $touched, from orphans_consumed_objects, and are matched within
// their dataset only.
// An edge consumes when it was first seen by as_of and last seen at or after since: its observed
// life overlaps the window (so a later sighting never turns a consumed object into an orphan).
// A read's time is its last sighting, or its first when the last is after as_of.
// Params: as_of, since (epoch ms); touched (the rows of orphans_consumed_objects: {dataset,
// own}); buckets (list of names, [] = all); include_deleted, with_consumed (true: every object,
// false: orphaned ones only); exclude (glob matchers from lineagegraph.values.globs);
// small (pricing.SMALL_OBJECT_BYTES); by_object (true: a row per :File, its urn in `object`;
// roll-ups have no objects to name: their rows keep `object` null and say `rolled_up`).

// 1. Each dataset is consumed through itself or any dataset above it: look its ancestors up.
// The touched datasets come with their objects consumed on their own; every other dataset gets
// an empty list (a membership test per dataset, not a search of the touched list).
WITH [t IN $touched | t.dataset] AS touched_urns
MATCH (other:Dataset)
WHERE NOT other.urn IN touched_urns
WITH collect(other.urn) AS idle
UNWIND $touched + [urn IN idle | {dataset: urn, own: []}] AS x
MATCH (d:Asset:Dataset {urn: x.dataset})
WHERE d.system = 's3' AND (size($buckets) = 0 OR split(d.urn, '/')[2] IN $buckets)
WITH d, x.own AS own,
     reduce(urns = [], part IN split(d.urn, '/')[2..] |
            urns + [coalesce(last(urns) + '/', 's3://') + part]) AS ancestors
UNWIND ancestors AS ancestor
OPTIONAL MATCH (c:Asset {urn: ancestor})
OPTIONAL MATCH (c)-[e:FLOWS_TO]->()
WHERE e.first_seen <= $as_of
WITH d, own, c, collect(e.last_seen) AS flow_seen,
     collect(CASE WHEN e.last_seen <= $as_of THEN e.last_seen ELSE e.first_seen END) AS flow_read
OPTIONAL MATCH (:Transformation)-[e:READS_FROM]->(c)
WHERE e.first_seen <= $as_of
WITH d, own, c, flow_seen, flow_read, collect(e.last_seen) AS read_seen,
     collect(CASE WHEN e.last_seen <= $as_of THEN e.last_seen ELSE e.first_seen END) AS read_read
WITH d, own, any(t IN flow_seen + read_seen WHERE t >= $since) AS live,
     reduce(m = null, t IN flow_read + read_read | CASE WHEN m IS NULL OR t > m THEN t ELSE m END)
       AS last
WITH d, own, collect(live) AS lives, max(last) AS dataset_last
WITH d, own, any(x IN lives WHERE x) AS covered, dataset_last,
     size(split(d.urn, '/')[2]) + 6 AS key_at  // where keys start in urns: after s3://bucket/
WHERE $with_consumed OR NOT covered

// 2. The present objects and roll-ups of the datasets left, each with its status and last read.
// A roll-up stops counting when a later harvest of its scope replaces it (its deleted_at).
MATCH (f)-[:PART_OF|ROLLUP_OF]->(d)
WHERE f.first_seen <= $as_of
  AND (($include_deleted AND f:File) OR f.deleted_at IS NULL OR f.deleted_at > $as_of)
// An object's key is its urn after `s3://bucket/` (the :File stores it once, in the urn).
WITH d, own, covered, dataset_last, f, substring(f.urn, key_at) AS key
WITH d, f,
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
                   AND size(reduce(rest = substring(s[i + j], size(b.segments[j][0])),
                                   piece IN b.segments[j][1..size(b.segments[j]) - 1] |
                                   CASE WHEN rest CONTAINS piece THEN substring(
                                       rest, size(split(rest, piece)[0]) + size(piece)) END))
                       >= size(last(b.segments[j]))))]) + size(b.segments),
             size(s) + 1))
         + g.rest <= size(s))))) THEN 'excluded'
     ELSE 'orphaned' END AS status
WHERE $with_consumed OR status = 'orphaned'
WITH d, storage_class, status, f:Rollup AS rolled_up,
     CASE WHEN $by_object AND f:File THEN f.urn END AS object, sum(coalesce(f.objects, 1)) AS objects,
     sum(coalesce(f.bytes, f.size)) AS bytes,
     sum(coalesce(f.small_objects, CASE WHEN f.size < $small THEN 1 ELSE 0 END)) AS small_objects,
     sum(coalesce(f.small_bytes, CASE WHEN f.size < $small THEN f.size ELSE 0 END)) AS small_bytes,
     min(coalesce(f.oldest_modified, f.last_modified)) AS oldest_modified,
     max(coalesce(f.newest_modified, f.last_modified)) AS newest_modified,
     max(last_read) AS last_read
RETURN split(d.urn, '/')[2] AS bucket, d.urn AS dataset, object, storage_class, status,
       rolled_up, objects, bytes, small_objects, small_bytes, oldest_modified, newest_modified,
       last_read
ORDER BY bucket, dataset, object, storage_class, status
