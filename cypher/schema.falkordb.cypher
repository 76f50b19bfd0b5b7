// Indexes for the embedded FalkorDB store: exact-match lookups for every MERGE key. No unique
// constraints: FalkorDB 4.16 crashes checking one on a value with a space at either end or a
// control character. Keys stay unique because FalkorDB runs a graph's writes one at a time and
// every statement MERGEs on the key (or CREATEs a fresh id). The store drops the constraints older stores have.
CREATE INDEX FOR (n:Asset) ON (n.urn);
CREATE INDEX FOR (n:Transformation) ON (n.urn);
CREATE INDEX FOR (n:Column) ON (n.urn);
CREATE INDEX FOR (n:HarvestRun) ON (n.id);
CREATE INDEX FOR (n:HarvestRun) ON (n.system);
CREATE INDEX FOR (n:Check) ON (n.urn);
CREATE INDEX FOR (n:Tag) ON (n.urn);
CREATE INDEX FOR (n:S3AccessLog) ON (n.key);
CREATE INDEX FOR (n:Run) ON (n.id);
CREATE INDEX FOR (n:SchemaVersion) ON (n.urn);
