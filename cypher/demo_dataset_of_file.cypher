// The dataset an S3 object belongs to. Params: urn (a :File urn).
MATCH (:File {urn: $urn})-[:PART_OF]->(d:Dataset)
RETURN d.urn AS dataset
