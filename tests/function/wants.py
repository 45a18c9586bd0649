"""Builders of expected responses: whole RunFunctionResponses as plain data."""

from collections.abc import Mapping, Sequence
from typing import Any

from modelplane.names import replica_name

from .factories import API, H100, IMAGE

MD_REQUIREMENTS = {
    "resources": {
        "clusters": {"api_version": API, "kind": "InferenceCluster"},
        "replicas": {"api_version": API, "kind": "ModelReplica"},
        "namespace": {"api_version": "v1", "kind": "Namespace", "match_name": "team-a"},
    }
}


def mr_requirements(cluster: str = "a", namespace: str = "team-a") -> dict[str, Any]:
    """What a ModelReplica on `cluster` in `namespace` requires: its InferenceCluster and its Namespace."""
    return {
        "resources": {
            "cluster": {"api_version": API, "kind": "InferenceCluster", "match_name": cluster},
            "namespace": {"api_version": "v1", "kind": "Namespace", "match_name": namespace},
        }
    }


def replica(
    cluster: str,
    index: int = 0,
    *,
    deployment: str = "llama",
    namespace: str = "team-a",
    gpus: int = 1,
    cel: str = H100,
    pool: str = "pool",
) -> dict[str, Any]:
    """The ModelReplica a deployment built by factories.deployment() composes on `cluster`."""
    return {
        "apiVersion": API,
        "kind": "ModelReplica",
        "metadata": {
            "name": replica_name(deployment, cluster, index),
            "namespace": namespace,
            "labels": {
                "modelplane.ai/cluster": cluster,
                "modelplane.ai/deployment": deployment,
                "modelplane.ai/replica-index": str(index),
            },
        },
        "spec": {
            "clusterName": cluster,
            "providerConfigRef": {"name": cluster},
            "workloadNamespace": "modelplane-workloads",
            "model": {"uri": "hf://Qwen/Qwen3-8B", "name": "qwen3-8b"},
            "serving": {"mode": "Unified"},
            "scheduling": {"queue": "default-queue", "priorityClassName": "inference"},
            "engines": [
                {
                    "name": "main",
                    "copies": 1,
                    "members": [
                        {
                            "role": "Standalone",
                            "nodePoolName": pool,
                            "deviceRequests": [
                                {
                                    "name": "gpu",
                                    "deviceClassName": "gpu.nvidia.com",
                                    "count": gpus,
                                    "selectors": [{"cel": {"expression": cel}}],
                                }
                            ],
                            "template": {"spec": {"containers": [{"name": "engine", "image": IMAGE}]}},
                        }
                    ],
                }
            ],
        },
    }


def placement_entry(cluster: str, index: int = 0, *, deployment: str = "llama", pool: str = "pool") -> dict[str, Any]:
    return {
        "name": replica_name(deployment, cluster, index),
        "cluster": cluster,
        "index": index,
        "pools": [{"engine": "main", "role": "Standalone", "pool": pool}],
    }


def condition(typ: str, status: str, reason: str, message: str) -> dict[str, str]:
    return {"type": typ, "status": f"STATUS_CONDITION_{status.upper()}", "reason": reason, "message": message}


def result(severity: str, reason: str, message: str) -> dict[str, str]:
    return {"severity": f"SEVERITY_{severity}", "reason": reason, "message": message, "target": "TARGET_COMPOSITE"}


def response(
    *,
    status: Mapping[str, Any] | None = None,
    resources: Mapping[str, tuple[Mapping[str, Any], bool]] | None = None,
    conditions: Sequence[Mapping[str, Any]] = (),
    results: Sequence[Mapping[str, Any]] = (),
    requirements: Mapping[str, Any] | None = None,
    ready: bool | None = None,
) -> dict[str, Any]:
    """A whole response; `resources` maps keys to (manifest, ready).

    `ready` is the composite's stated readiness; by default it says what a ReplicasReady (ModelDeployment)
    or ReplicaReady (ModelReplica) condition among `conditions` says, and is absent without one.
    """
    desired: dict[str, Any] = {}
    if ready is None:
        said = [c["status"] for c in conditions if c["type"] in ("ReplicasReady", "ReplicaReady")]
        ready = said[0] == "STATUS_CONDITION_TRUE" if said else None
    if status is not None:
        desired["composite"] = {"resource": {"status": dict(status)}}
    if ready is not None:
        desired["composite"] = {**desired.get("composite", {}), "ready": "READY_TRUE" if ready else "READY_FALSE"}
    if resources:
        desired["resources"] = {
            key: {"resource": dict(obj), **({"ready": "READY_TRUE"} if ready else {})}
            for key, (obj, ready) in resources.items()
        }
    out: dict[str, Any] = {"meta": {"tag": "t", "ttl": "60s"}, "desired": desired, "context": {}}
    if results:
        out["results"] = list(results)
    if requirements is not None:
        out["requirements"] = dict(requirements)
    if conditions:
        out["conditions"] = list(conditions)
    return out
