"""`lineagegraph demo`: a three-system data platform on this machine, harvested end to end."""
