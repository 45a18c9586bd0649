"""What the API edge emits (desired ModelReplicas, published gpuPools) validates against our XRDs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from modelplane.api import gpu_pools_status, replica_manifest

from tests.api.test_parse import ROUND_TRIPS, load

ROOT = Path(__file__).resolve().parents[2]
VALIDATOR = ROOT.parent / "shared" / "tools" / "validate-manifests"


def test_replica_manifests_and_published_pools_validate(tmp_path: Path) -> None:
    if not VALIDATOR.exists():
        pytest.skip(f"{VALIDATOR} is absent: the shared schema validator is not checked out next to the repo")
    cluster = load("cluster-fleet-member.yaml")
    cluster["status"] = {"gpuPools": gpu_pools_status(cluster)}
    docs = [replica_manifest(c.replica) for c in ROUND_TRIPS] + [cluster]
    path = tmp_path / "emitted.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    out = subprocess.run(
        [sys.executable, str(VALIDATOR), "--xrd", str(ROOT / "apis"), str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert (out.returncode, [line for line in out.stdout.splitlines() if "error:" in line]) == (0, [])
    assert out.stdout.count("OK ") == len(docs)
