"""What the LLMInferenceService carries besides its pods: labels, annotations, tolerations, router, credentials."""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from modelplane import names
from modelplane.model import ModelRef, ModelReplica, Parallelism, Phase, ServingMode, TaintEffect, Toleration
from modelplane.render import render_notes, render_replica

from tests.render.factories import container_template, engine, gpus, leader_worker, member, replica

View = Callable[[dict[str, Any]], object]
IDENTITY = {
    "modelplane.ai/cluster": "gpu-east",
    "modelplane.ai/deployment": "qwen",
    "modelplane.ai/deployment-namespace": "team-a",
    "modelplane.ai/replica": "qwen-gpu-east-0",
    "modelplane.ai/replica-index": "0",
}
POD_GROUP = names.workload_name("team-a", "qwen", 0, "gpu-east", "podgroup")  # the PodGroup rendered beside it


def _llmis(r: ModelReplica) -> dict[str, Any]:
    obj = next(o for o in render_replica(r) if o.readiness_source)
    return obj.manifest["spec"]["forProvider"]["manifest"]


def _pod_meta(spec: dict[str, Any]) -> dict[str, Any]:
    return {"labels": spec["labels"], "annotations": spec["annotations"]}


def _member_with(**template: Any) -> tuple[Any, ...]:
    return (member(requests=(gpus(),), template=container_template(**template)),)


def _hf_token(secret: str, key: str) -> dict[str, Any]:
    return {"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": secret, "key": key}}}


@dataclass(frozen=True)
class Case:
    name: str
    replica: ModelReplica
    view: View
    want: object


CASES = [
    Case(
        "KServe's reserved keys never reach the pods, and deployment labels stay on the objects' metadata",
        replica(
            labels={"app.kubernetes.io/part-of": "chat", "team": "a", "kueue.x-k8s.io/queue-name": "q"},
            engines=(
                engine(
                    members=_member_with(
                        labels={"app.kubernetes.io/name": "x", "llm-d.ai/role": "r", "tier": "gold"},
                        annotations={"prometheus.io/scrape": "true"},
                    )
                ),
            ),
        ),
        lambda m: {"metadata": m["metadata"]["labels"], "pods": _pod_meta(m["spec"])},
        {
            "metadata": {"app.kubernetes.io/part-of": "chat", "team": "a", **IDENTITY, "modelplane.ai/engine": "main"},
            "pods": {
                "labels": {
                    **IDENTITY,
                    "modelplane.ai/engine": "main",
                    "tier": "gold",
                    "kai.scheduler/queue": "default-queue",
                    "kai.scheduler/subgroup-name": "main",
                },
                "annotations": {
                    "prometheus.io/scrape": "true",
                    "pod-group-name": POD_GROUP,
                    "kai.scheduler/skip-podgrouper": "true",
                },
            },
        },
    ),
    Case(
        "prefill pods carry every label and annotation of theirs, decode pods theirs",
        replica(
            serving_mode=ServingMode.PREFILL_DECODE,
            engines=(engine("decode", phase=Phase.DECODE), engine("prefill", phase=Phase.PREFILL)),
        ),
        lambda m: {"decode": _pod_meta(m["spec"]), "prefill": _pod_meta(m["spec"]["prefill"])},
        {
            kind: {
                "labels": {
                    **IDENTITY,
                    "modelplane.ai/engine": kind,
                    "kai.scheduler/queue": "default-queue",
                    "kai.scheduler/subgroup-name": kind,
                },
                "annotations": {"pod-group-name": POD_GROUP, "kai.scheduler/skip-podgrouper": "true"},
            }
            for kind in ("decode", "prefill")
        },
    ),
    Case(
        "the deployment's tolerations reach leader and worker pods, before the GPU toleration",
        replica(
            engines=(engine(members=leader_worker(nodes=1)),),
            tolerations=(
                Toleration(key="capacity-type", value="spot", effect=TaintEffect.NO_SCHEDULE),
                Toleration(key="maintenance", operator="Exists"),
            ),
        ),
        lambda m: [m["spec"]["template"]["tolerations"], m["spec"]["worker"]["tolerations"]],
        [
            [
                {"key": "capacity-type", "operator": "Equal", "value": "spot", "effect": "NoSchedule"},
                {"key": "maintenance", "operator": "Exists"},
                {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
            ]
        ]
        * 2,
    ),
    Case(
        "a toleration the same as the GPU one appears once",
        replica(tolerations=(Toleration(key="nvidia.com/gpu", operator="Exists", effect=TaintEffect.NO_SCHEDULE),)),
        lambda m: m["spec"]["template"]["tolerations"],
        [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
    ),
    Case(
        "unified serving has no router by default",
        replica(),
        lambda m: m["spec"].get("router"),
        None,
    ),
    Case(
        "prefill/decode serving gets KServe's managed gateway, route and scheduler",
        replica(
            serving_mode=ServingMode.PREFILL_DECODE,
            engines=(engine("decode", phase=Phase.DECODE), engine("prefill", phase=Phase.PREFILL)),
        ),
        lambda m: m["spec"]["router"],
        {"gateway": {}, "route": {}, "scheduler": {}},
    ),
    Case(
        "a configured router and base configs pass through as written",
        replica(
            router={"gateway": {"refs": [{"name": "inference", "namespace": "gateways"}]}, "route": {}},
            base_refs=("team-vllm-tuning",),
        ),
        lambda m: {"router": m["spec"]["router"], "baseRefs": m["spec"]["baseRefs"]},
        {
            "router": {"gateway": {"refs": [{"name": "inference", "namespace": "gateways"}]}, "route": {}},
            "baseRefs": [{"name": "team-vllm-tuning"}],
        },
    ),
    Case(
        "a model's storage secret becomes the storage-initializer annotation of both KServe install methods",
        replica(model=ModelRef(uri="s3://models/llama", storage_secret_name="s3-creds")),
        lambda m: m["metadata"].get("annotations"),
        # Helm installs read the first key, kustomize installs the second (render/storage.py)
        {"serving.kserve.io/secretName": "s3-creds", "serving.kserve.io/storageSecretName": "s3-creds"},
    ),
    Case(
        "an hf:// model takes the secret the engine's HF_TOKEN reads, when its key is HF_TOKEN",
        replica(engines=(engine(members=_member_with(env=(_hf_token("hf", "HF_TOKEN"),))),)),
        lambda m: m["metadata"].get("annotations"),
        {"serving.kserve.io/secretName": "hf", "serving.kserve.io/storageSecretName": "hf"},
    ),
    Case(
        "an HF_TOKEN under another key names no secret KServe could read",
        replica(engines=(engine(members=_member_with(env=(_hf_token("hf", "token"),))),)),
        lambda m: m["metadata"].get("annotations"),
        None,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_llmis_fields(case: Case) -> None:
    assert case.view(_llmis(case.replica)) == case.want


@dataclass(frozen=True)
class NoteCase:
    name: str
    replica: ModelReplica
    want: tuple[str, ...]


NOTES = [
    NoteCase("data parallelism needs nothing more", replica(engines=(engine(members=leader_worker(nodes=1)),)), ()),
    NoteCase(
        "pipeline parallelism says which config KServe will look for",
        replica(engines=(engine("gang", members=leader_worker(nodes=1), parallelism=Parallelism(pipeline=2)),)),
        (
            "engine gang uses pipeline parallelism: KServe ships no preset for it, so the cluster needs an "
            "LLMInferenceServiceConfig named kserve-config-llm-worker-pipeline-parallel in namespace "
            "modelplane-workloads or KServe's own, else the LLMInferenceService stays PresetsCombined=False "
            "(ConfigNotFound).",
        ),
    ),
]


@pytest.mark.parametrize("case", NOTES, ids=lambda c: c.name)
def test_render_notes(case: NoteCase) -> None:
    assert render_notes(case.replica) == case.want
