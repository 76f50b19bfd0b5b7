"""The fuzz tests reuse the harvester tests' S3 server (tests/harvest/s3_fixtures.py) and the
serve tests' server (tests/serve/serve_fixtures.py)."""

import sys
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[1] / d) for d in ("harvest", "serve")]

from s3_fixtures import moto_endpoint  # noqa: E402, F401  (fixtures are found by name)
