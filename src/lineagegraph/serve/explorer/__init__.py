"""The lineage explorer in the browser: its routes and page (routes.py), and the pictures it
asks for, drawn as SVG: lineage, paths and an asset's page (pictures.py), and the same lineage
with each asset's columns (column_pictures.py)."""
