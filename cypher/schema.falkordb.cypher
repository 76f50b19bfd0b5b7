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
// Range indexes for `lineagegraph diff` (docs/history.md). A node's changed_at is the newest
// of its own history times and those of the lineage edges leaving it, so what changed since a
// time is an index range on nodes. The labels are indexed already (urn), so a range costs little
// memory, where an index on the edges would cost about as much as their history. A column's
// own history time is first_seen, a schema version's `at`.
CREATE INDEX FOR (n:Asset) ON (n.changed_at);
CREATE INDEX FOR (n:Column) ON (n.changed_at);
CREATE INDEX FOR (n:Transformation) ON (n.changed_at);
CREATE INDEX FOR (n:Column) ON (n.first_seen);
CREATE INDEX FOR (n:SchemaVersion) ON (n.at);
