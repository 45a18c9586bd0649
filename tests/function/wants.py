"""Builders of expected responses: whole RunFunctionResponses as plain data."""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from modelplane import api
from modelplane.names import replica_name
from modelplane.rollout import revision

from . import factories
from .factories import API, H100, IMAGE


def revision_of(*, gpus: int = 1, cel: str = H100) -> str:
    """The template revision of factories.deployment() with these devices."""
    return revision(api.parse_deployment(factories.deployment(gpus=gpus, cel=cel)))


REV = revision_of()

MD_REQUIREMENTS = {
    "resources": {
        "clusters": {"api_version": API, "kind": "InferenceCluster"},
        "replicas": {"api_version": API, "kind": "ModelReplica"},
        "demands": {"api_version": API, "kind": "ModelDemand"},
        "quotas": {"api_version": API, "kind": "FleetQuota"},
        "priorityclasses": {"api_version": "scheduling.k8s.io/v1", "kind": "PriorityClass"},
        "namespace": {"api_version": "v1", "kind": "Namespace", "match_name": "team-a"},
    }
}


# The status a ModelReplica built by replica() (one H100, the default revision) shows once rendered.
RENDERED = {"renderedRevision": revision_of()}


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
    revision: str | None = "",
) -> dict[str, Any]:
    """The ModelReplica a deployment built by factories.deployment() composes on `cluster`.

    It carries the revision of that deployment's template unless `revision` says another (None: none).
    """
    revision = revision_of(gpus=gpus, cel=cel) if revision == "" else revision
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
                **({"modelplane.ai/revision": revision} if revision else {}),
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


def placement_entry(
    cluster: str, index: int = 0, *, deployment: str = "llama", pool: str = "pool", revision: str | None = REV
) -> dict[str, Any]:
    return {
        "name": replica_name(deployment, cluster, index),
        "cluster": cluster,
        "index": index,
        **({"revision": revision} if revision else {}),
        "pools": [{"engine": "main", "role": "Standalone", "pool": pool}],
    }


@dataclass(frozen=True)
class Rollout:
    """What a ModelDeployment's answer says of its rollout: status counts, revision, Progressing.

    `updated` defaults to the placement entries at `revision`, `available` to the ready resources.
    """

    desired: int
    revision: str = REV
    updated: int | None = None
    available: int | None = None
    progressing: Mapping[str, str] | None = None  # another Progressing condition than the counts give


def progressing(rollout: Rollout, *, updated: int, available: int, total: int) -> dict[str, str]:
    n, rev = rollout.desired, rollout.revision
    if updated == n == total and available == n:
        return condition(
            "Progressing", "True", "RolloutComplete", f"All {n} replicas run revision {rev} and are available."
        )
    wanted = f"{n} replica" if n == 1 else f"{n} replicas"
    message = f"Rolling out revision {rev}: {updated} updated, {available} available, {total} in all for {wanted}."
    return condition("Progressing", "True", "RollingOut", message)


def _rolled(
    rollout: Rollout,
    status: Mapping[str, Any],
    resources: Mapping[str, tuple[Mapping[str, Any], bool]],
    conditions: Sequence[Mapping[str, Any]],
) -> tuple[dict[str, Any], list[Mapping[str, Any]]]:
    placement = status.get("placement", [])
    updated = rollout.updated
    if updated is None:
        updated = sum(1 for p in placement if p.get("revision") == rollout.revision)
    available = rollout.available
    if available is None:
        available = sum(1 for _, ready in resources.values() if ready)
    counts = {**status["replicas"], "updated": updated, "available": available}
    out = {**status, "replicas": counts, "revision": rollout.revision}
    total = counts["total"]
    cond = rollout.progressing or progressing(rollout, updated=updated, available=available, total=total)
    return dict(sorted(out.items())), [*conditions, cond]


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
    rollout: Rollout | None = None,
) -> dict[str, Any]:
    """A whole response; `resources` maps keys to (manifest, ready).

    `ready` is the composite's stated readiness; by default it says what a ReplicasReady (ModelDeployment)
    or ReplicaReady (ModelReplica) condition among `conditions` says, and is absent without one.
    """
    desired: dict[str, Any] = {}
    if rollout is not None:
        status, conditions = _rolled(rollout, status or {}, resources or {}, conditions)
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


def rendered_replica(
    resources: dict[str, Any], message: str, ready: dict[str, str], *, revision: str | None = None
) -> dict[str, Any]:
    """A ModelReplica's response: its objects, ReplicaRendered True with `message`, and `ready` (ReplicaReady);
    `revision`, the one it rendered (recorded in status when its label names one)."""
    return response(
        requirements=mr_requirements(),
        status={"renderedRevision": revision} if revision else None,
        resources=resources,
        conditions=[condition("ReplicaRendered", "True", "Rendered", message), ready],
    )
