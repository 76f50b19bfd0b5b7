"""tests/services/ceph-rgw.sh: each run its own directory and ports, and stop ends all of it.

Runs the real script (a one-node Ceph cluster, ~20 s) when Ceph is installed; it never installs
Ceph itself. Another cluster on the machine (say on the usual 127.0.0.1:7480) is never touched:
the script picks free ports and stops only daemons whose pid files are in its own directory.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import urllib.error
import urllib.request
from pathlib import Path

import boto3
import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "tests" / "services" / "ceph-rgw.sh"

pytestmark = pytest.mark.skipif(
    shutil.which("radosgw") is None or shutil.which("ceph-mon") is None,
    reason="Ceph (radosgw, ceph-mon) is not installed",
)


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(") ")[-1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"  # a stopped daemon may linger as a zombie until its parent reaps it


def answers(endpoint: str) -> bool:
    try:
        urllib.request.urlopen(endpoint + "/", timeout=5).close()
    except urllib.error.HTTPError:
        return True
    except OSError:
        return False
    return True


def test_a_run_has_its_own_directory_and_port_and_stop_ends_it(tmp_path: Path) -> None:
    directory = tmp_path / "rgw"
    env = {k: v for k, v in os.environ.items() if k not in ("RGW_PORT", "MON_PORT")}
    try:
        started = subprocess.run(
            ["bash", str(SCRIPT), "start", str(directory)],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert started.returncode == 0, started.stderr[-3000:]
        endpoint = (directory / "endpoint").read_text().strip()
        assert f"export LINEAGEGRAPH_TEST_RGW={endpoint}" in started.stdout
        assert not endpoint.endswith(":7480"), "a free port, not the machine-wide one"
        s3 = boto3.client(
            "s3",
            endpoint_url=endpoint,
            region_name="us-east-1",
            aws_access_key_id="test",
            aws_secret_access_key="test",
        )
        s3.create_bucket(Bucket="own")
        s3.put_object(Bucket="own", Key="cold.csv", Body=b"x", StorageClass="GLACIER")
        listed = s3.list_objects_v2(Bucket="own")["Contents"]
        assert [(o["Key"], o["StorageClass"]) for o in listed] == [("cold.csv", "GLACIER")]
        pids = [int(f.read_text()) for f in (directory / "run").glob("*.pid")]
        assert len(pids) == 3 and all(map(alive, pids))  # mon, osd, rgw
    finally:
        stopped = subprocess.run(
            ["bash", str(SCRIPT), "stop", str(directory)],
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert stopped.returncode == 0, stopped.stderr
    assert not any(map(alive, pids))
    assert not answers(endpoint)


def test_stop_needs_the_directory() -> None:
    result = subprocess.run(["bash", str(SCRIPT), "stop"], capture_output=True, text=True)
    assert result.returncode == 2 and "stop DIR" in result.stderr
