"""Reports over the graph: orphaned S3 objects and what S3 storage costs (docs/orphans.md)."""
