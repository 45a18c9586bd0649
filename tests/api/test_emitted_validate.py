"""What the API edge emits (desired ModelReplicas, published gpuPools) validates against our XRDs."""

from __future__ import annotations

from pathlib import Path

import yaml
from modelplane.api import gpu_pools_status, replica_manifest

from tests.api.test_parse import ROUND_TRIPS, load
from tests.validator import run_validator


def test_replica_manifests_and_published_pools_validate(tmp_path: Path) -> None:
    cluster = load("cluster-fleet-member.yaml")
    cluster["status"] = {"gpuPools": gpu_pools_status(cluster)}
    docs = [replica_manifest(c.replica) for c in ROUND_TRIPS] + [cluster]
    path = tmp_path / "emitted.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    out = run_validator(path)
    assert (out.returncode, [line for line in out.stdout.splitlines() if "error:" in line]) == (0, [])
    assert out.stdout.count("OK ") == len(docs)
