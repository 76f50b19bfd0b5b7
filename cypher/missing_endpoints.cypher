// Which endpoints of dropped writes no node holds. Rows: {urn, label} with label "Asset",
// "Column", "Transformation" or "Target" (an :Asset or a :Column, what a check tests).
// Each label is looked up through its own urn index.
UNWIND $ends AS e
OPTIONAL MATCH (a:Asset {urn: e.urn})
OPTIONAL MATCH (c:Column {urn: e.urn})
OPTIONAL MATCH (t:Transformation {urn: e.urn})
WITH e, a, c, t
WHERE NOT ((e.label IN ['Asset', 'Target'] AND a IS NOT NULL)
        OR (e.label IN ['Column', 'Target'] AND c IS NOT NULL)
        OR (e.label = 'Transformation' AND t IS NOT NULL))
RETURN e.urn AS urn, e.label AS label
