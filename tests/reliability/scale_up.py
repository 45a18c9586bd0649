"""examples/scale-up as a RunFunctionRequest: two Ready replicas running, a third cluster new, 2 -> 4.

Tests change one thing (a selector, a published capacity) and check that the two running replicas
survive it. The objects are the example's own files, so the scenario is the one users read about.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from tests.function.factories import namespace, request

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "scale-up"
RESOURCE_NAME = "crossplane.io/composition-resource-name"


def _documents(name: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all((EXAMPLE / name).read_text()) if d]


@dataclass
class ScaleUp:
    """The example's inputs as plain dicts (mutable on purpose)."""

    xr: dict[str, Any] = field(default_factory=lambda: _documents("xr.yaml")[0])
    clusters: list[dict[str, Any]] = field(
        default_factory=lambda: [d for d in _documents("required-resources.yaml") if d["kind"] == "InferenceCluster"]
    )
    replicas: list[dict[str, Any]] = field(
        default_factory=lambda: [d for d in _documents("required-resources.yaml") if d["kind"] == "ModelReplica"]
    )
    observed: dict[str, dict[str, Any]] = field(
        default_factory=lambda: {
            d["metadata"]["annotations"][RESOURCE_NAME]: d
            for d in _documents("observed-resources.yaml")
            if d["kind"] == "ModelReplica"
        }
    )

    def with_selector(self, index: int, cel: str) -> ScaleUp:
        """The deployment with its `index`-th selector (0-based) replaced."""
        out = copy.deepcopy(self)
        member = out.xr["spec"]["template"]["spec"]["engines"][0]["members"][0]
        member["nodeSelector"]["devices"][0]["selectors"][index] = {"cel": cel}
        return out

    def with_capacity(self, cluster: str, pool: str, value: str) -> ScaleUp:
        """One cluster's published pool now carries `value` as its GPUs' memory."""
        out = copy.deepcopy(self)
        ic = next(c for c in out.clusters if c["metadata"]["name"] == cluster)
        for pools in (ic["spec"]["nodePools"], ic["status"]["gpuPools"]):
            next(p for p in pools if p["name"] == pool)["devices"][0]["capacity"]["memory"] = {"value": value}
        return out

    def request(self) -> fnv1.RunFunctionRequest:
        required = {"clusters": self.clusters, "replicas": self.replicas, "namespace": [namespace("team-chat")]}
        return request(self.xr, observed=self.observed, required=required)

    @property
    def running(self) -> list[str]:
        """The composition keys of the replicas running before the change."""
        return sorted(self.observed)
