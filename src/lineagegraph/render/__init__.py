"""Pictures and text of lineage answers: a terminal tree and table, JSON, Mermaid, Graphviz DOT,
and a self-contained HTML page, one module per kind of output.

Every answer (upstream, downstream, paths, impact, columns) becomes one `View` (views.py): nodes
placed in levels (distance from the start, negative upstream) and edges in the direction data
flows. Each format draws a View, so they all show the same graph. The HTML page is an inline SVG
laid out here in Python (svg.py), so it opens anywhere without a network or a script.
"""
