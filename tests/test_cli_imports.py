"""The CLI starts fast: heavy client libraries load only for the command that needs them.

A question such as `lineagegraph upstream` against a running `lineagegraph serve` answers in
well under a second, most of it Python starting (docs/serve.md). Importing the Snowflake
connector, boto3, sqlglot or Spark at start-up would cost more than the answer itself, so the
command modules import them inside the commands that use them; this keeps it that way.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
HEAVY = [
    "boto3",
    "botocore",
    "snowflake",
    "sqlglot",
    "pyspark",
    "starlette",
    "uvicorn",
    "fakesnow",
    "moto",
    "pyarrow",
    "duckdb",
    "neo4j",
    "openlineage",
]


def test_loading_every_command_imports_no_heavy_client_library() -> None:
    code = (
        "import json, sys; import lineagegraph.cli; "
        f"print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r}))))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        env={"PYTHONPATH": str(SRC)},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert json.loads(result.stdout) == []
