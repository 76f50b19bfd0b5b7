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
// Neither side scans the assets (millions of objects): the FLOWS_TO side starts from the edges,
// through their first_seen index (schema.*.cypher; at 10,000,000 objects the scan of every asset
// for its FLOWS_TO took 9-10 s of the server's CPU, the index scan milliseconds), the READS_FROM
// side from the transformations (few). The urn test comes after each edge is found.
// Params: as_of, since (epoch ms).
MATCH ()-[e:FLOWS_TO]->()
WHERE e.first_seen <= $as_of
WITH startNode(e) AS a, e
WHERE a:Asset AND (a.urn STARTS WITH 's3://' OR a:File)
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
