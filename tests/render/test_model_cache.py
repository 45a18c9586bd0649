"""A replica serving from a ModelCache: what its pods mount once KServe has reconciled its LLMIS.

KServe attaches a `pvc://<claim>[/<path>]` model itself (KS v0.16.0 to v0.20.0,
pkg/controller/v1alpha2/llmisvc/workload_storage.go `attachPVCModelArtifact` -> pkg/utils/storage.go
`AddModelMount`): on the container `main` it appends the mount `kserve-pvc-source` at /mnt/models,
read-only, with the path as subPath, and the volume of that name for the claim, unless `main`
already mounts a volume of that name, in which case it adds neither. `_kserve` transcribes that, so
the table shows what the pods run with: Modelplane's read-write mount of the cache's claim, once.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, replace
from typing import Any

import pytest
from crossplane.function.resource import child_name
from modelplane.cache import claim_name
from modelplane.model import ModelRef, ModelReplica, Phase, ServingMode
from modelplane.render import RenderError, render_replica

from tests.render.factories import QWEN, engine, leader_worker, replica

PVC_SOURCE = "kserve-pvc-source"  # KS pkg/constants PvcSourceMountName
CLAIM = child_name("modelcache", "team-a", "qwen")  # as Modelplane's cache composition names it


def _kserve(pod: dict[str, Any], uri: str) -> dict[str, Any]:
    """The pod spec after KServe's AddModelMount for a pvc:// model (main is the serving container)."""
    pod = copy.deepcopy(pod)
    claim, _, path = uri.removeprefix("pvc://").partition("/")
    main = next(c for c in pod["containers"] if c["name"] == "main")
    if any(m["name"] == PVC_SOURCE for m in main.get("volumeMounts", [])):
        return pod  # addVolumeMountToContainer: mount exists, and then no volume is added either
    mount = {"name": PVC_SOURCE, "mountPath": "/mnt/models", "readOnly": True, **({"subPath": path} if path else {})}
    main["volumeMounts"] = [*main.get("volumeMounts", []), mount]
    if all(v["name"] != PVC_SOURCE for v in pod.get("volumes", [])):
        pod["volumes"] = [*pod.get("volumes", []), {"name": PVC_SOURCE, "persistentVolumeClaim": {"claimName": claim}}]
    return pod


def _mounted(r: ModelReplica) -> dict[str, Any]:
    """Per LLMIS pod spec: the model URI and name, and what `main` reads at /mnt/models after KServe."""
    out: dict[str, Any] = {}
    for obj in render_replica(r):
        llmis = obj.manifest["spec"]["forProvider"]["manifest"]
        if llmis["kind"] != "LLMInferenceService":
            continue
        spec = llmis["spec"]
        pods = {k: spec[k] for k in ("template", "worker") if k in spec}
        pods |= {f"prefill.{k}": spec["prefill"][k] for k in ("template", "worker") if k in spec.get("prefill", {})}
        for part, written in pods.items():
            uri = spec["model"]["uri"]
            pod = _kserve(written, uri) if uri.startswith("pvc://") else written
            claims = {
                v["name"]: v["persistentVolumeClaim"]["claimName"]
                for v in pod.get("volumes", [])
                if "persistentVolumeClaim" in v
            }
            main = next(c for c in pod["containers"] if c["name"] == "main")
            out[f"{uri} as {spec['model']['name']}: {part}"] = [
                (claims[m["name"]], "ro" if m.get("readOnly") else "rw")
                for m in main.get("volumeMounts", [])
                if m["mountPath"] == "/mnt/models"
            ]
    return out


@dataclass(frozen=True)
class Case:
    name: str
    replica: ModelReplica
    want: dict[str, Any]


CACHED = replace(
    replica(deployment="qwen"),
    model_cache="qwen",
    model=ModelRef(uri=f"pvc://{CLAIM}", name="qwen3"),
    workload_namespace="default",
)

CASES = [
    Case(
        "a standalone pod mounts the cache's claim read-write, once",
        CACHED,
        {f"pvc://{CLAIM} as qwen3: template": [(CLAIM, "rw")]},
    ),
    Case(
        "leader and workers alike",
        replace(CACHED, engines=(engine(members=leader_worker(nodes=1)),)),
        {f"pvc://{CLAIM} as qwen3: template": [(CLAIM, "rw")], f"pvc://{CLAIM} as qwen3: worker": [(CLAIM, "rw")]},
    ),
    Case(
        "prefill and decode pods alike",
        replace(
            CACHED,
            serving_mode=ServingMode.PREFILL_DECODE,
            engines=(engine("decode", phase=Phase.DECODE), engine("prefill", phase=Phase.PREFILL)),
        ),
        {
            f"pvc://{CLAIM} as qwen3: template": [(CLAIM, "rw")],
            f"pvc://{CLAIM} as qwen3: prefill.template": [(CLAIM, "rw")],
        },
    ),
    Case(
        "a replica Modelplane composed, with no model, serves the cache under the cache's name",
        replace(CACHED, model=None),
        {f"pvc://{CLAIM} as qwen: template": [(CLAIM, "rw")]},
    ),
    Case(
        "without a cache a pvc:// model gets KServe's read-only mount",
        replace(replica(), model=ModelRef(uri="pvc://weights/qwen", name="qwen3")),
        {"pvc://weights/qwen as qwen3: template": [("weights", "ro")]},
    ),
    Case(
        "without a cache an hf:// model mounts nothing of ours",
        replica(model=QWEN),
        {"hf://Qwen/Qwen3-8B as Qwen/Qwen3-8B: template": []},
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_pods_serve_from_the_cache(case: Case) -> None:
    assert _mounted(case.replica) == case.want


def test_the_claim_is_named_as_modelplane_names_it() -> None:
    long = ("a" * 40, "b" * 40)
    assert (claim_name("team-a", "qwen"), claim_name(*long)) == (CLAIM, child_name("modelcache", *long))


def test_a_cached_replica_whose_pods_cannot_mount_the_claim_is_not_rendered() -> None:
    with pytest.raises(RenderError) as err:
        render_replica(replace(CACHED, workload_namespace="modelplane-workloads"))
    assert str(err.value) == (
        "ModelCache qwen's claim is in namespace default and a pod mounts only a claim of its own namespace; "
        "set the cluster's workloadNamespace to default"
    )
