"""Values that harvesters and reports share, below both: exclusion globs, S3 prices and the
tallies that price objects and roll-ups alike. Nothing here imports harvest/ or reports/."""
