// Whether the graph holds any S3 object (:File) or roll-up of objects (:Rollup) at all: an
// orphan or cost report of no rows says "harvest S3 first" instead of reading as "no orphans".
// Params: none.
MATCH (f:File)
RETURN f.urn AS urn
LIMIT 1
UNION
MATCH (r:Rollup)
RETURN r.bucket AS urn
LIMIT 1
