"""The S3 harvesters: bucket listings and S3 Inventory reports to :File nodes PART_OF their
folded :Dataset. client.py makes the client and words its errors, listing.py and inventory.py
turn a listing or a report into pages, scan.py writes pages as lister threads bring them,
settle.py soft-deletes and rolls up, inventory_spark.py tallies a report in Spark, and
harvester.py runs it all (`S3Harvester`, `S3InventoryHarvester`)."""

from lineagegraph.harvest.s3.harvester import S3Harvester, S3InventoryHarvester

__all__ = ["S3Harvester", "S3InventoryHarvester"]
