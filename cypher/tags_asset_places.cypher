// Where assets live, for the policies of `check --policy`: system, region (S3 datasets, from
// the bucket's location), an object's storage class, and the storage classes of the objects
// that are part of a dataset.
// Params: urns (list of asset urns).
UNWIND $urns AS u
MATCH (a:Asset {urn: u})
OPTIONAL MATCH (f:File)-[:PART_OF]->(a)
WITH u, a, collect(DISTINCT f.storage_class) AS parts
RETURN u AS urn, a.system AS system, a.region AS region, a.storage_class AS storage_class,
       parts AS part_classes
