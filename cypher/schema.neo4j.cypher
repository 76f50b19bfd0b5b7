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
