// Neo4j (see store_schema_marker): record on the marker node, made on first use, the
// init_schema steps done ($step; never lowered) and how far the step under way got ($part,
// $after; null when none is). Params: step (integer), part, after (text or null).
MERGE (m:LineagegraphSchema {key: 'lineagegraph'})
SET m.step = CASE WHEN m.step > $step THEN m.step ELSE $step END,
    m.part = $part, m.after = $after
