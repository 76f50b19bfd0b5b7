"""The questions lineagegraph answers over the graph: lineage (upstream, downstream, paths,
impact, columns), the answers that render themselves, the quality gate, quality and status."""
