// Neo4j (lineagegraph.graph.upgrade), which has no place beside the graph for it: the store's
// schema marker, the one :LineagegraphSchema node. `step`: the init_schema steps done; `part`,
// `after`: how far the step under way got (null when none is). No rows on a store written
// before the marker. It is not data: every other statement names the labels it reads.
MATCH (m:LineagegraphSchema)
RETURN m.step AS step, m.part AS part, m.after AS after
