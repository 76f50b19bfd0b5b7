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
// Drops of assets not known yet (lineagegraph.graph.history), looked up by urn.
CREATE INDEX FOR (n:PendingDrop) ON (n.urn);
// Range indexes for `lineagegraph diff` (docs/history.md): changed_at is the newest of an
// asset's or lineage edge's history times, so what changed since a time is an index range (a
// column's only history time is first_seen, a schema version's `at`). Only what diff reads:
// an index on the edges costs about as much memory as their history properties.
CREATE INDEX FOR (n:Asset) ON (n.changed_at);
CREATE INDEX FOR (n:Column) ON (n.first_seen);
CREATE INDEX FOR (n:SchemaVersion) ON (n.at);
CREATE INDEX FOR ()-[e:FLOWS_TO]-() ON (e.changed_at);
CREATE INDEX FOR ()-[e:FEEDS]-() ON (e.changed_at);
CREATE INDEX FOR ()-[e:READS_FROM]-() ON (e.changed_at);
CREATE INDEX FOR ()-[e:WRITES_TO]-() ON (e.changed_at);
