// Assets (not deleted) by quality, for `lineagegraph status`: the worst rank of the latest
// results of their checks and their columns' checks (lineagegraph.questions.quality.RANK; 0, skipped
// only, is unknown). Assets with no check are not counted here.
MATCH (c:Check)-[:CHECKS]->(t)
OPTIONAL MATCH (t)-[:COLUMN_OF]->(owner:Asset)
WITH coalesce(owner, t) AS a, max(c.rank) AS worst
WHERE a.deleted_at IS NULL
RETURN worst, count(a) AS assets
ORDER BY worst
