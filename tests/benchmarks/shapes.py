"""ModelDeployment shapes as users write them, and ModelReplicas as the function composes them.

Three shapes: Standalone (one 8-GPU Hopper pod with >= 80Gi per GPU), Leader/Worker (a
coordinator-only leader and 2 H200 workers that also need a Synthetic InfiniBand NIC) and
Prefill/Decode (prefill on any GPU of compute capability >= 8.9, decode on Blackwell with a recent
driver). Selectors use the DRA CEL surface: driver, attributes, capacity, quantity() and semver().
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

API = "modelplane.ai/v1alpha1"
GPU_DRIVER = "gpu.nvidia.com"
NIC_DRIVER = "dra.net"
IMAGE = "vllm/vllm-openai:v0.11.0"

# Selectors, as users write them.
HOPPER_80G = (
    f'device.driver == "{GPU_DRIVER}" && device.attributes["{GPU_DRIVER}"].architecture == "Hopper"',
    f'device.capacity["{GPU_DRIVER}"].memory.compareTo(quantity("80Gi")) >= 0',
)
H200 = (f'device.attributes["{GPU_DRIVER}"].productName == "NVIDIA H200"',)
INFINIBAND = (f'device.driver == "{NIC_DRIVER}" && device.attributes["{NIC_DRIVER}"].rdma',)
PREFILL = (
    f'device.driver == "{GPU_DRIVER}"',
    f'device.attributes["{GPU_DRIVER}"].cudaComputeCapability.compareTo(semver("8.9.0")) >= 0',
)
DECODE = (
    f'device.attributes["{GPU_DRIVER}"].architecture == "Blackwell"',
    f'device.attributes["{GPU_DRIVER}"].driverVersion.isGreaterThan(semver("555.0.0"))',
)


class Shape(StrEnum):
    STANDALONE = "standalone"
    LEADER_WORKER = "leader-worker"
    PREFILL_DECODE = "prefill-decode"


def ready_condition(status: str) -> dict[str, str]:
    """A Ready condition as the API server stores it (lastTransitionTime is required)."""
    reason = "Available" if status == "True" else "Unavailable"
    return {"type": "Ready", "status": status, "reason": reason, "lastTransitionTime": "2026-01-01T00:00:00Z"}


# --- deployments --------------------------------------------------------------------------------


def _device(name: str, selectors: tuple[str, ...], count: int = 1) -> dict[str, Any]:
    return {"name": name, "count": count, "selectors": [{"cel": s} for s in selectors]}


def _template(args: list[str] | None = None, command: list[str] | None = None) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "engine", "image": IMAGE}
    if command:
        container["command"] = command
    if args:
        container["args"] = args
    return {"spec": {"containers": [container]}}


# A claimless leader renders only with a launcher of its own: KServe's presets run vLLM ranks, and
# need GPUs, on every pod they launch, the leader included. (These shapes exercise scheduling and
# rendering; they are not meant to run.)
COORDINATOR = ["/bin/sh", "-c", "exec ray start --head --block"]


def _engines(shape: Shape) -> list[dict[str, Any]]:
    match shape:
        case Shape.STANDALONE:
            member = {
                "role": "Standalone",
                "nodeSelector": {"devices": [_device("gpu", HOPPER_80G, 8)]},
                "template": _template(["--max-model-len", "32768"]),
            }
            return [{"name": "main", "members": [member]}]
        case Shape.LEADER_WORKER:
            devices = [_device("gpu", H200, 8), _device("nic", INFINIBAND)]
            return [
                {
                    "name": "gang",
                    "members": [
                        {"role": "Leader", "template": _template(command=COORDINATOR)},
                        {
                            "role": "Worker",
                            "worker": {"nodes": 2},
                            "nodeSelector": {"devices": devices},
                            "template": _template(),
                        },
                    ],
                }
            ]
        case Shape.PREFILL_DECODE:
            return [
                {
                    "name": "prefill",
                    "phase": "Prefill",
                    "copies": 2,
                    "members": [
                        {
                            "role": "Standalone",
                            "nodeSelector": {"devices": [_device("gpu", PREFILL, 4)]},
                            "template": _template(),
                        }
                    ],
                },
                {
                    "name": "decode",
                    "phase": "Decode",
                    "members": [
                        {"role": "Leader", "template": _template(command=COORDINATOR)},
                        {
                            "role": "Worker",
                            "worker": {"nodes": 1},
                            "nodeSelector": {"devices": [_device("gpu", DECODE, 8)]},
                            "template": _template(),
                        },
                    ],
                },
            ]


def deployment(shape: Shape, *, replicas: int, name: str = "bench", namespace: str = "bench") -> dict[str, Any]:
    """A ModelDeployment XR of the given shape (every cluster selected; tolerates nothing)."""
    spec: dict[str, Any] = {
        "model": {"uri": "hf://Qwen/Qwen3-32B", "name": "qwen3-32b"},
        "serving": {"mode": "PrefillDecode" if shape is Shape.PREFILL_DECODE else "Unified"},
        "engines": _engines(shape),
    }
    return {
        "apiVersion": API,
        "kind": "ModelDeployment",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"replicas": replicas, "template": {"metadata": {"labels": {"app": name}}, "spec": spec}},
    }


# --- existing replicas --------------------------------------------------------------------------

# Per shape: each engine's (name, phase, GPU kinds it runs on, GPUs per node, members as (role, workers)).
PLACED: dict[Shape, tuple[tuple[str, str | None, frozenset[str], int, tuple[tuple[str, int], ...]], ...]] = {
    Shape.STANDALONE: (("main", None, frozenset({"h100", "h200"}), 8, (("Standalone", 0),)),),
    Shape.LEADER_WORKER: (("gang", None, frozenset({"h200"}), 8, (("Leader", 0), ("Worker", 2))),),
    Shape.PREFILL_DECODE: (
        ("prefill", "Prefill", frozenset({"h100", "h200", "b200", "l40s"}), 4, (("Standalone", 0),)),
        ("decode", "Decode", frozenset({"b200"}), 8, (("Leader", 0), ("Worker", 1))),
    ),
}


def _member(role: str, workers: int, pool: str, gpus: int) -> dict[str, Any]:
    member: dict[str, Any] = {"role": role, "nodePoolName": pool, "template": _template()}
    if role == "Worker":
        member["worker"] = {"nodes": workers}
    if role != "Leader":  # leaders are coordinator-only: claimless, zero node cost
        member["deviceRequests"] = [
            {
                "name": "gpu",
                "deviceClassName": GPU_DRIVER,
                "count": gpus,
                "selectors": [{"cel": {"expression": f'device.driver == "{GPU_DRIVER}"'}}],
            }
        ]
    return member


def replica(
    *, dep: str, namespace: str, shape: Shape, cluster: str, index: int, copies: int, pools: list[str]
) -> dict[str, Any]:
    engines: list[dict[str, Any]] = []
    for (engine, phase, _, gpus, members), pool in zip(PLACED[shape], pools, strict=True):
        placed: dict[str, Any] = {
            "name": engine,
            "copies": copies,
            "members": [_member(role, w, pool, gpus) for role, w in members],
        }
        if phase:
            placed["phase"] = phase
        engines.append(placed)
    return {
        "apiVersion": API,
        "kind": "ModelReplica",
        "metadata": {
            "name": f"{dep}-{cluster}-{index}",
            "namespace": namespace,
            "labels": {
                "app": dep,
                "modelplane.ai/deployment": dep,
                "modelplane.ai/cluster": cluster,
                "modelplane.ai/replica-index": str(index),
            },
        },
        "spec": {
            "clusterName": cluster,
            "providerConfigRef": {"name": cluster},
            "workloadNamespace": "modelplane-workloads",
            "model": {"uri": f"hf://org/{dep}", "name": dep},
            "serving": {"mode": "PrefillDecode" if shape is Shape.PREFILL_DECODE else "Unified"},
            "scheduling": {"queue": "inference"},
            "engines": engines,
        },
        "status": {"conditions": [ready_condition("True")]},
    }
