"""schemathesis (issue 21) against a real `serve` over loopback: every route of its own
/openapi.json with generated inputs, without the token and with it. No 5xx, no hang, every
answer (status, content type, body, headers such as Allow) as the document says.

Left out, on purpose: `negative_data_rejection` (the endpoint takes more than the document
describes, as OpenLineage producers send facets and fields of their own) and the stateful phase
(schemathesis guesses links between routes from parameter names, e.g. a lineage nodeId fed to
column lineage). Generated strings include NUL: the store holds any character."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from serve_fixtures import TOKEN, Server

SCHEMATHESIS = shutil.which("schemathesis", path=str(Path(sys.executable).parent))


@pytest.mark.skipif(SCHEMATHESIS is None, reason="schemathesis is not installed (dev extra)")
@pytest.mark.parametrize("with_token", [False, True], ids=["no-token", "token"])
def test_every_route_answers_as_its_openapi_document_says(server: Server, with_token: bool) -> None:
    assert SCHEMATHESIS is not None
    headers = ["-H", f"Authorization: Bearer {TOKEN}"] if with_token else []
    run = subprocess.run(
        [SCHEMATHESIS, "run", f"{server.url}/openapi.json", "--checks", "all",
         "--exclude-checks", "negative_data_rejection", "--phases", "examples,coverage,fuzzing",
         "--max-examples", "15", "--generation-deterministic",
         "--request-timeout", "20", "--max-response-time", "15", "--workers", "1", *headers],
        capture_output=True, text=True, timeout=600, cwd=server.data_dir.parent,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-8000:] + run.stderr[-2000:]
    assert "Traceback" not in server.log()
