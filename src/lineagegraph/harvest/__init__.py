"""Harvesters: one module (or package) per source, each turning what a system reports into graph
writes through lineagegraph.identity, so assets seen from two systems meet as one node."""
