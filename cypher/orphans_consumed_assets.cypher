// The S3 assets consumed by as_of, for the orphan and cost reports: a row per asset and kind of
// consuming edge (a FLOWS_TO out of it; a READS_FROM into it from a transformation), whatever the
// asset is. A dataset or table consumed covers the datasets at and below its urn; an object
// (:File) consumed on its own (a Spark read of one file path, a COPY INTO of one key) counts
// within its dataset only (`dataset`, the one it is PART_OF). One scan of the consuming edges
// (few): lineagegraph.reports.tally.usage_records looks each dataset's ancestors up in these
// rows, in Python, rather than in the graph once per dataset and ancestor.
// An edge consumes when it was first seen by as_of and last seen at or after since (`live`): its
// observed life overlaps the window (so a later sighting never turns a consumed object into an
// orphan). A read's time is its last sighting, or its first when the last is after as_of
// (`last`, the latest read). A READS_FROM row also names its reader (`reader`, the
// transformation's name: a job, or a principal reading S3 directly), one row per reader.
// The urn test comes after each edge is found (a WITH), not on every asset scanned: on a graph of
// millions of objects that test, pushed down to the scan, cost as much as the scan itself; the
// READS_FROM side starts from the transformations (few).
// Params: as_of, since (epoch ms).
MATCH (a:Asset)-[e:FLOWS_TO]->()
WHERE e.first_seen <= $as_of
WITH a, e
WHERE a.urn STARTS WITH 's3://' OR a:File
OPTIONAL MATCH (a)-[:PART_OF]->(d:Dataset)
RETURN a.urn AS urn, d.urn AS dataset, max(e.last_seen) >= $since AS live,
       max(CASE WHEN e.last_seen <= $as_of THEN e.last_seen ELSE e.first_seen END) AS last,
       null AS reader
UNION ALL
MATCH (t:Transformation)-[e:READS_FROM]->(a)
WHERE e.first_seen <= $as_of
WITH t, a, e
WHERE a:Asset AND (a.urn STARTS WITH 's3://' OR a:File)
OPTIONAL MATCH (a)-[:PART_OF]->(d:Dataset)
RETURN a.urn AS urn, d.urn AS dataset, max(e.last_seen) >= $since AS live,
       max(CASE WHEN e.last_seen <= $as_of THEN e.last_seen ELSE e.first_seen END) AS last,
       t.name AS reader
