"""The fuzz tests reuse the harvester tests' S3 server (tests/harvest/s3_fixtures.py)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "harvest"))

from s3_fixtures import moto_endpoint  # noqa: F401  (fixtures are found by name)
