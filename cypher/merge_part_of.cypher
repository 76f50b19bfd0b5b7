// (:File)-[:PART_OF]->(:Dataset). Rows: {file, dataset}.
UNWIND $rows AS r
MATCH (f:File {urn: r.file})
MATCH (d:Dataset {urn: r.dataset})
MERGE (f)-[:PART_OF]->(d)
