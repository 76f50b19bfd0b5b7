// Embedded store only (see store_raw_nodes): the highest node id, where the scan stops.
MATCH (n)
RETURN max(id(n)) AS top
