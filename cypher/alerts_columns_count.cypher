// How many columns these assets have: the columns in an alert's blast radius.
// Params: urns (list of asset urns).
UNWIND $urns AS u
MATCH (c:Column)-[:COLUMN_OF]->(:Asset {urn: u})
RETURN count(c) AS columns
