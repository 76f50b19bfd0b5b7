// Constraints for Neo4j 5: each unique constraint also backs MERGE lookups with an index.
CREATE CONSTRAINT asset_urn IF NOT EXISTS FOR (n:Asset) REQUIRE n.urn IS UNIQUE;
CREATE CONSTRAINT transformation_urn IF NOT EXISTS FOR (n:Transformation) REQUIRE n.urn IS UNIQUE;
CREATE CONSTRAINT column_urn IF NOT EXISTS FOR (n:Column) REQUIRE n.urn IS UNIQUE;
CREATE CONSTRAINT harvest_run_id IF NOT EXISTS FOR (n:HarvestRun) REQUIRE n.id IS UNIQUE;
CREATE INDEX harvest_run_system IF NOT EXISTS FOR (n:HarvestRun) ON (n.system);
CREATE CONSTRAINT check_urn IF NOT EXISTS FOR (n:Check) REQUIRE n.urn IS UNIQUE;
CREATE CONSTRAINT tag_urn IF NOT EXISTS FOR (n:Tag) REQUIRE n.urn IS UNIQUE;
CREATE CONSTRAINT s3_access_log_key IF NOT EXISTS FOR (n:S3AccessLog) REQUIRE n.key IS UNIQUE;
CREATE CONSTRAINT run_id IF NOT EXISTS FOR (n:Run) REQUIRE n.id IS UNIQUE;
CREATE CONSTRAINT schema_version_urn IF NOT EXISTS FOR (n:SchemaVersion) REQUIRE n.urn IS UNIQUE;
// Drops of assets not known yet (lineagegraph.graph.history), looked up by urn.
CREATE INDEX pending_drop_urn IF NOT EXISTS FOR (n:PendingDrop) ON (n.urn);
// The one schema marker node (lineagegraph.graph.upgrade): two commands opening an older store
// at once make one, not two.
CREATE CONSTRAINT lineagegraph_schema_key IF NOT EXISTS FOR (n:LineagegraphSchema) REQUIRE n.key IS UNIQUE;
// Range indexes for `lineagegraph diff` (docs/history.md). A node's changed_at is the newest
// of its own history times and those of the lineage edges leaving it, so what changed since a
// time is an index range on nodes. The labels are indexed already (urn), so a range costs little
// memory, where an index on the edges would cost about as much as their history. A column's
// own history time is first_seen, a schema version's `at`.
CREATE INDEX asset_changed_at IF NOT EXISTS FOR (n:Asset) ON (n.changed_at);
CREATE INDEX column_changed_at IF NOT EXISTS FOR (n:Column) ON (n.changed_at);
CREATE INDEX transformation_changed_at IF NOT EXISTS FOR (n:Transformation) ON (n.changed_at);
CREATE INDEX column_first_seen IF NOT EXISTS FOR (n:Column) ON (n.first_seen);
CREATE INDEX schema_version_at IF NOT EXISTS FOR (n:SchemaVersion) ON (n.at);
