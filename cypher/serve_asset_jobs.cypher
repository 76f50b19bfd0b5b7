// The jobs (transformations) that read or write each of these assets: one hop of the
// Marquez-compatible lineage graph (lineagegraph.serve.marquez), from datasets to jobs.
// Params: urns (list of asset urns).
UNWIND $urns AS u
MATCH (a:Asset {urn: u})<-[r:READS_FROM|WRITES_TO]-(t:Transformation)
RETURN a.urn AS asset, t.urn AS job, type(r) AS rel
