// The column names the graph knows for one asset (e.g. a dataset's columns written by the Spark
// listener), so that a COPY that matches columns by name can feed from them. Params: urn.
MATCH (c:Column)-[:COLUMN_OF]->(:Asset {urn: $urn})
RETURN c.name AS name
ORDER BY name
