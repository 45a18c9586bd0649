"""What the API edge emits (desired ModelReplicas, published gpuPools) validates against our XRDs."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import yaml
from modelplane.api import gpu_pools_status, relayed_status, replica_manifest
from modelplane.cache import claim_name
from modelplane.model import ModelRef

from tests.api.test_parse import ROUND_TRIPS, load
from tests.validator import run_validator


def test_replica_manifests_and_published_pools_validate(tmp_path: Path) -> None:
    cluster = load("cluster-fleet-member.yaml")
    cluster["status"] = {"cache": {"storageClassName": "nfs"}}  # as Modelplane published it
    cluster["status"] = {"gpuPools": gpu_pools_status(cluster), **relayed_status(cluster)}
    assert set(cluster["status"]) == {"gpuPools", "providerConfigRef", "cache"}
    cached = replace(
        ROUND_TRIPS[0].replica,
        model_cache="qwen",
        model=ModelRef(uri=f"pvc://{claim_name('team-a', 'qwen')}", name="qwen3"),
    )
    docs = [replica_manifest(c.replica) for c in ROUND_TRIPS] + [replica_manifest(cached), cluster]
    assert replica_manifest(cached)["spec"]["modelCacheRef"] == {"name": "qwen"}
    path = tmp_path / "emitted.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    out = run_validator(path)
    assert (out.returncode, [line for line in out.stdout.splitlines() if "error:" in line]) == (0, [])
    assert out.stdout.count("OK ") == len(docs)
