// Data moving to unauthorized regions or storage classes: every FLOWS_TO edge into an S3
// asset whose bucket region is not among $regions, or that holds objects (itself, or files
// part of it) in one of $storage_classes, with the asset it came from and the jobs on the
// edge, while the edge holds (not retired, docs/history.md). An asset of unknown region (the S3 harvester did not read it) is not listed for
// region. `lineagegraph check --policy` applies the same rules to tagged data only.
// Params: regions (list of allowed regions), storage_classes (list of forbidden classes).
// Run:
//   lineagegraph query --name tags_unauthorized_places -p 'regions=["eu-west-1"]' \
//     -p 'storage_classes=["GLACIER", "DEEP_ARCHIVE"]'
MATCH (a:Asset)-[e:FLOWS_TO]->(b:Asset)
WHERE b.urn STARTS WITH 's3://' AND b.deleted_at IS NULL AND e.retired_at IS NULL
OPTIONAL MATCH (f:File)-[:PART_OF]->(b)
WITH a, e, b, [c IN collect(DISTINCT f.storage_class) + [b.storage_class]
               WHERE c IS NOT NULL AND c IN $storage_classes] AS classes
WITH a, e, b, classes, b.region IS NOT NULL AND NOT b.region IN $regions AS wrong_region
WHERE wrong_region OR size(classes) > 0
RETURN a.urn AS source, b.urn AS target, b.region AS region, classes AS storage_classes,
       e.via AS via
ORDER BY target, source
