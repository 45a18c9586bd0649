"""Modelplane v0.3.1's own examples schedule here, over real gRPC, unchanged.

Each example directory of tests/api/modelplane is a small fleet: its InferenceClusters are published
by the InferenceCluster function from the InferenceClasses they name, then each ModelDeployment of
the directory is scheduled against them. The table is where each replica lands.
"""

from collections import defaultdict
from pathlib import Path
from typing import Any

import yaml
from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from .conftest import as_dict
from .factories import namespace, request

MANIFESTS = Path(__file__).resolve().parents[1] / "api" / "modelplane"


def _fleets() -> dict[str, list[dict[str, Any]]]:
    by_dir: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for path in sorted(MANIFESTS.rglob("*.yaml")):
        for obj in yaml.safe_load_all(path.read_text()):
            if isinstance(obj, dict):
                by_dir[str(path.parent.relative_to(MANIFESTS))].append({**obj, "_file": path.name})
    return by_dir


def _publish(run_function: Any, ic: dict[str, Any], classes: dict[str, dict[str, Any]]) -> dict[str, Any]:
    names = sorted({p["className"] for p in ic["spec"]["nodePools"] if "className" in p})
    required = {"replicas": [], **{f"class-{n}": [classes[n]] for n in names}}
    rsp = as_dict(run_function(request(ic, required=required)))
    return {**ic, "status": rsp["desired"]["composite"]["resource"]["status"]}


def _placement(rsp: dict[str, Any]) -> list[str]:
    status = rsp["desired"]["composite"]["resource"]["status"]
    return [f"{p['cluster']}: {', '.join(x['pool'] for x in p['pools'])}" for p in status.get("placement", [])]


def _schedule(run_function: Any) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    classes = {o["metadata"]["name"]: o for objs in _fleets().values() for o in objs if o["kind"] == "InferenceClass"}
    for directory, objs in _fleets().items():
        clusters = [_publish(run_function, o, classes) for o in objs if o["kind"] == "InferenceCluster"]
        for md in (o for o in objs if o["kind"] == "ModelDeployment"):
            xr = {k: v for k, v in md.items() if k != "_file"}
            required = {"clusters": clusters, "replicas": [], "namespace": [namespace(md["metadata"]["namespace"])]}
            req: fnv1.RunFunctionRequest = request(xr, required=required)
            out[f"{directory}/{md['_file']}"] = _placement(as_dict(run_function(req)))
    return out


def test_modelplanes_examples_schedule_here(run_function) -> None:
    assert _schedule(run_function) == {
        # H100s have 80Gi; the multi-node example asks for >= 120Gi (H200s), which no concept cluster has
        "docs/manifests/concepts/model-deployment-multinode.yaml": [],
        "docs/manifests/concepts/model-deployment.yaml": ["eks-us-west: gpu-l4"],
        "docs/manifests/examples/anthropic-messages-api/model-deployment.yaml": ["nebius-eu-north: gpu-h100"],
        "docs/manifests/examples/collecting-engine-metrics/model-deployment.yaml": ["gke-l4-single: gpu-l4"],
        "docs/manifests/examples/glm-4.5-air/model-deployment.yaml": ["gke-a100: gpu-a100"],
        "docs/manifests/examples/kimi-k2/model-deployment.yaml": ["eks-kimi: gpu-h200, gpu-h200"],
        "docs/manifests/examples/laguna/model-deployment-sglang.yaml": ["nebius-eu-north: gpu-h100"],
        "docs/manifests/examples/laguna/model-deployment.yaml": ["nebius-eu-north: gpu-h100"],
        "docs/manifests/examples/llama-3.1-8b/model-deployment.yaml": ["eks-l4-single: gpu-l4"],
        "docs/manifests/examples/nemotron-3.5-lightning/model-deployment.yaml": ["nebius-eu-north: gpu-h100"],
        "docs/manifests/examples/qwen2.5-72b/model-deployment.yaml": [
            "aks-a100-single: gpua100",
            "nebius-h100-single: gpu-h100",
        ],
        "docs/manifests/examples/qwen3-8b/model-deployment.yaml": ["eks-l4: gpu-l4"],
        # the two directories below hold no InferenceCluster: nothing to schedule onto
        "docs/manifests/examples/qwen3-8b-speculative-decoding/model-deployment.yaml": [],
        "docs/manifests/overview/model-deployment.yaml": [],
        "docs/manifests/examples/qwen3-coder/model-deployment-fp8.yaml": ["eks-coder: gpu-h200"],
        "docs/manifests/examples/qwen3-coder/model-deployment.yaml": ["eks-coder: gpu-h200, gpu-h200"],
        "docs/manifests/getting-started/aks/model-deployment-west.yaml": ["aks-eastus: gpua100"],
        "docs/manifests/getting-started/aks/model-deployment.yaml": ["aks-westeurope: gpua10"],
        "docs/manifests/getting-started/eks/model-deployment-west.yaml": ["eks-us-west: gpu-l40s"],
        "docs/manifests/getting-started/eks/model-deployment.yaml": ["eks-us-east: gpu-l4"],
        "docs/manifests/getting-started/gke/model-deployment-west.yaml": ["gpu-us-west: gpu-a100"],
        "docs/manifests/getting-started/gke/model-deployment.yaml": ["starter: gpu-l4"],
        "docs/manifests/getting-started/nebius/model-deployment-scale.yaml": ["nebius-eu-north-h100: gpu-h100"],
        "docs/manifests/getting-started/nebius/model-deployment.yaml": ["nebius-eu-north: gpu-l40s"],
        "docs/manifests/reference/modeldeployments.yaml": ["west-gke: h100-pool", "west-gke: h100-pool"],
        "e2e/manifests/40-model-deployment.yaml": ["local: gpu-synthetic"],
    }
