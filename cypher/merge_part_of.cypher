// (:File)-[:PART_OF]->(:Dataset). Rows: {file, dataset}.
// Both ends are found through the :Asset(urn) index (a `:File {urn}` match scans every file
// on FalkorDB); urns are unique across assets, so the label adds nothing.
// Returns the rows written: one whose endpoint is not in the graph is left out (the writer
// writes it again at the end of the run, then counts it as dropped).
UNWIND $rows AS r
MATCH (f:Asset {urn: r.file})
MATCH (d:Asset {urn: r.dataset})
MERGE (f)-[:PART_OF]->(d)
RETURN count(*) AS written
