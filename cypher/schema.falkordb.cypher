// Indexes for the embedded FalkorDB store. Unique constraints on the same keys are created by
// the store through FalkorDB's constraint command (not expressible in its Cypher).
CREATE INDEX FOR (n:Asset) ON (n.urn);
CREATE INDEX FOR (n:Transformation) ON (n.urn);
CREATE INDEX FOR (n:Column) ON (n.urn);
CREATE INDEX FOR (n:HarvestRun) ON (n.id);
CREATE INDEX FOR (n:HarvestRun) ON (n.system);
