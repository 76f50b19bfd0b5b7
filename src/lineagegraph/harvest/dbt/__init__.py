"""dbt as a source: a project's artifacts (manifest, catalog, run results) as lineage, columns
and test results (docs/dbt.md)."""

from lineagegraph.harvest.dbt.harvester import DbtHarvester, DbtReport, harvest_dbt, read_project

__all__ = ["DbtHarvester", "DbtReport", "harvest_dbt", "read_project"]
