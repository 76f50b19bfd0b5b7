// The baseline of benchmarks/bench_orphans.py (not shipped): the orphan question asked once per
// object, the naive way, instead of once per dataset as cypher/orphans_usage.cypher does. Same
// meaning: consumption of the object or of a dataset containing it, within the window; the
// default exclusions; present objects. Params: root (`s3://bucket/`), as_of, since.
MATCH (f:File)-[:PART_OF]->(d:Dataset)
WHERE f.urn STARTS WITH $root AND f.first_seen <= $as_of AND f.deleted_at IS NULL
WITH f, d, substring(f.urn, size($root), size(f.urn) - size($root)) AS key
WHERE NOT (key = '_SUCCESS' OR key ENDS WITH '/_SUCCESS'
           OR key STARTS WITH '_temporary/' OR key CONTAINS '/_temporary/')
WITH f, [f.urn] + reduce(urns = [], part IN split(d.urn, '/')[2..] |
                         urns + [coalesce(last(urns) + '/', 's3://') + part]) AS consumers
UNWIND consumers AS urn
OPTIONAL MATCH (c:Asset {urn: urn})
OPTIONAL MATCH (c)-[e:FLOWS_TO]->()
WHERE e.first_seen <= $as_of AND e.last_seen >= $since
WITH f, c, count(e) AS flows
OPTIONAL MATCH (:Transformation)-[r:READS_FROM]->(c)
WHERE r.first_seen <= $as_of AND r.last_seen >= $since
WITH f, flows, count(r) AS reads
WITH f, sum(flows + reads) AS uses
WHERE uses = 0
RETURN count(f) AS objects, sum(f.size) AS bytes
