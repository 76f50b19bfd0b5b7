// The lineage edges of one asset with their history, for `lineagegraph history`: FLOWS_TO both
// ways, the transformations reading and writing it, and the FEEDS of its columns
// (`direction`: 'in' or 'out' of the asset or its column). Params: urn (asset urn).
MATCH (a:Asset {urn: $urn})-[e:FLOWS_TO]->(o:Asset)
RETURN type(e) AS kind, 'out' AS direction, a.urn AS node, o.urn AS other,
       e.first_seen AS first_seen, e.stopped AS stopped, e.resumed AS resumed
UNION ALL
MATCH (a:Asset {urn: $urn})<-[e:FLOWS_TO|READS_FROM|WRITES_TO]-(o)
RETURN type(e) AS kind, 'in' AS direction, a.urn AS node, o.urn AS other,
       e.first_seen AS first_seen, e.stopped AS stopped, e.resumed AS resumed
UNION ALL
MATCH (a:Asset {urn: $urn})<-[:COLUMN_OF]-(c:Column)-[e:FEEDS]->(o:Column)
RETURN type(e) AS kind, 'out' AS direction, c.urn AS node, o.urn AS other,
       e.first_seen AS first_seen, e.stopped AS stopped, e.resumed AS resumed
UNION ALL
MATCH (a:Asset {urn: $urn})<-[:COLUMN_OF]-(c:Column)<-[e:FEEDS]-(o:Column)
RETURN type(e) AS kind, 'in' AS direction, c.urn AS node, o.urn AS other,
       e.first_seen AS first_seen, e.stopped AS stopped, e.resumed AS resumed
