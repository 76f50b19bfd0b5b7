// The dataset each of these S3 objects is PART_OF: lineage is recorded between datasets, so a
// path asked from (or to) an object is looked for from its dataset. Params: urns (File urns).
UNWIND $urns AS u
MATCH (:File {urn: u})-[:PART_OF]->(d:Dataset)
RETURN u AS file, d.urn AS dataset
