"""`lineagegraph serve`: one long-running process that takes OpenLineage events over HTTP and
answers Marquez-compatible lineage questions from the graph it keeps open."""
