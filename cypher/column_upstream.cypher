// Every column upstream of one column, end to end, each once with its shortest distance (up to
// 10 FEEDS hops) and its asset. Params: urn (a column urn, `{asset urn}#{column}`).
// Example: lineagegraph query --name column_upstream -p 'urn=snowflake://acme/DB.S.T#ID'
// Level by level (docs/graph-model.md): each of the ten identical steps expands only the
// columns first reached by the step before, so wide fan-in never multiplies into paths.
MATCH (start:Column {urn: $urn})
WITH [[start]] AS levels, [start] AS known
UNWIND CASE WHEN last(levels) = [] THEN [null] ELSE last(levels) END AS f
OPTIONAL MATCH (f)<-[:FEEDS]-(n:Column)
WITH levels, known, [c IN collect(DISTINCT n) WHERE NOT c IN known] AS new
WITH levels + [new] AS levels, known + new AS known
UNWIND CASE WHEN last(levels) = [] THEN [null] ELSE last(levels) END AS f
OPTIONAL MATCH (f)<-[:FEEDS]-(n:Column)
WITH levels, known, [c IN collect(DISTINCT n) WHERE NOT c IN known] AS new
WITH levels + [new] AS levels, known + new AS known
UNWIND CASE WHEN last(levels) = [] THEN [null] ELSE last(levels) END AS f
OPTIONAL MATCH (f)<-[:FEEDS]-(n:Column)
WITH levels, known, [c IN collect(DISTINCT n) WHERE NOT c IN known] AS new
WITH levels + [new] AS levels, known + new AS known
UNWIND CASE WHEN last(levels) = [] THEN [null] ELSE last(levels) END AS f
OPTIONAL MATCH (f)<-[:FEEDS]-(n:Column)
WITH levels, known, [c IN collect(DISTINCT n) WHERE NOT c IN known] AS new
WITH levels + [new] AS levels, known + new AS known
UNWIND CASE WHEN last(levels) = [] THEN [null] ELSE last(levels) END AS f
OPTIONAL MATCH (f)<-[:FEEDS]-(n:Column)
WITH levels, known, [c IN collect(DISTINCT n) WHERE NOT c IN known] AS new
WITH levels + [new] AS levels, known + new AS known
UNWIND CASE WHEN last(levels) = [] THEN [null] ELSE last(levels) END AS f
OPTIONAL MATCH (f)<-[:FEEDS]-(n:Column)
WITH levels, known, [c IN collect(DISTINCT n) WHERE NOT c IN known] AS new
WITH levels + [new] AS levels, known + new AS known
UNWIND CASE WHEN last(levels) = [] THEN [null] ELSE last(levels) END AS f
OPTIONAL MATCH (f)<-[:FEEDS]-(n:Column)
WITH levels, known, [c IN collect(DISTINCT n) WHERE NOT c IN known] AS new
WITH levels + [new] AS levels, known + new AS known
UNWIND CASE WHEN last(levels) = [] THEN [null] ELSE last(levels) END AS f
OPTIONAL MATCH (f)<-[:FEEDS]-(n:Column)
WITH levels, known, [c IN collect(DISTINCT n) WHERE NOT c IN known] AS new
WITH levels + [new] AS levels, known + new AS known
UNWIND CASE WHEN last(levels) = [] THEN [null] ELSE last(levels) END AS f
OPTIONAL MATCH (f)<-[:FEEDS]-(n:Column)
WITH levels, known, [c IN collect(DISTINCT n) WHERE NOT c IN known] AS new
WITH levels + [new] AS levels, known + new AS known
UNWIND CASE WHEN last(levels) = [] THEN [null] ELSE last(levels) END AS f
OPTIONAL MATCH (f)<-[:FEEDS]-(n:Column)
WITH levels, known, [c IN collect(DISTINCT n) WHERE NOT c IN known] AS new
WITH levels + [new] AS levels, known + new AS known
UNWIND range(1, size(levels) - 1) AS distance
UNWIND levels[distance] AS c
OPTIONAL MATCH (c)-[:COLUMN_OF]->(a:Asset)
RETURN c.urn AS column, c.name AS name, a.urn AS asset, a.deleted_at AS deleted_at, distance
ORDER BY distance, asset, name
