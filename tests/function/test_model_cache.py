"""A ModelDeployment naming a ModelCache, over real gRPC: the function reads the cache from the
deployment's namespace, places new replicas only where a Ready copy can be mounted, says why it
places none, and never removes a running replica for the cache's sake."""

from typing import Any

import pytest
from modelplane import api
from modelplane.cache import claim_name
from modelplane.names import replica_name
from modelplane.rollout import revision
from modelplane.scheduler.filters import REASON_NO_MODEL_CACHE

from .conftest import as_dict
from .factories import API, Case, cluster, deployment, request, resolved, with_ready
from .wants import MD_REQUIREMENTS, Rollout, condition, placement_entry, replica, response, result

CACHED = deployment()
CACHED["spec"]["template"]["spec"]["modelCacheRef"] = {"name": "qwen3-8b"}
CACHED_REV = revision(api.parse_deployment(CACHED))
REQUIREMENTS = {
    "resources": {
        **MD_REQUIREMENTS["resources"],
        "model-cache": {"api_version": API, "kind": "ModelCache", "match_name": "qwen3-8b", "namespace": "team-a"},
    }
}


def mounting(name: str) -> dict[str, Any]:
    """A cluster whose workloads run in the namespace where Modelplane's ModelCache stages its volume."""
    obj = cluster(name)
    obj["spec"]["workloadNamespace"] = "default"
    return obj


def cache(*phases: tuple[str, str], namespace: str = "team-a") -> dict[str, Any]:
    return {
        "apiVersion": API,
        "kind": "ModelCache",
        "metadata": {"name": "qwen3-8b", "namespace": namespace},
        "spec": {"source": "HuggingFace", "huggingFace": {"repo": "Qwen/Qwen3-8B", "sizeGiB": 20}},
        "status": {"clusters": [{"name": c, "phase": p} for c, p in phases]},
    }


def cached_replica(cluster_name: str) -> dict[str, Any]:
    obj = replica(cluster_name, revision=CACHED_REV)
    obj["spec"]["workloadNamespace"] = "default"
    obj["spec"]["modelCacheRef"] = {"name": "qwen3-8b"}
    # served from the cache's claim under the model's own name: nothing is downloaded
    obj["spec"]["model"] = {"uri": f"pvc://{claim_name('team-a', 'qwen3-8b')}", "name": "qwen3-8b"}
    return obj


def required(*caches: dict[str, Any], clusters: list[dict[str, Any]]) -> dict[str, list[Any]]:
    return {**resolved(clusters=clusters), "model-cache": list(caches)}


def unplaced(details: dict[str, str], *, scheduled: int = 0) -> tuple[dict[str, Any], dict[str, str], dict[str, str]]:
    """The status entry, condition and warning of 1 replica the cache keeps from being placed."""
    summary = f"0/{len(details)} clusters are available: {len(details)} {REASON_NO_MODEL_CACHE}."
    message = f"Scheduled {scheduled} of {scheduled + 1} replicas; 0/{len(details)} clusters are available for the rest: {len(details)} {REASON_NO_MODEL_CACHE}."
    entry = {
        "count": 1,
        "summary": summary,
        "clusters": [{"cluster": c, "reason": REASON_NO_MODEL_CACHE, "detail": d} for c, d in details.items()],
    }
    return (
        entry,
        condition("ReplicasScheduled", "False", "WaitingForModelCache", message),
        result("WARNING", "WaitingForModelCache", message),
    )


def ready_condition(n: int, of: int) -> dict[str, str]:
    if n >= of:
        return condition("ReplicasReady", "True", "AllReplicasReady", f"{n} of {of} replicas are ready.")
    return condition("ReplicasReady", "False", "ReplicasNotReady", f"{n} of {of} replicas are ready.")


MISSING = unplaced({"a": "ModelCache team-a/qwen3-8b does not exist"})
UNREADABLE = unplaced(
    {"a": "ModelCache team-a/qwen3-8b cannot be read: status.clusters[0].name: String should have at least 1 character"}
)
HYDRATING = unplaced({"a": "ModelCache qwen3-8b is Hydrating here"}, scheduled=1)
KEPT = deployment(replicas=2)
KEPT["spec"]["template"]["spec"]["modelCacheRef"] = {"name": "qwen3-8b"}

CASES = [
    Case(
        name="the replica goes where the cache is Ready and names the cache",
        req=request(
            CACHED,
            required=required(cache(("a", "Hydrating"), ("b", "Ready")), clusters=[mounting("a"), mounting("b")]),
        ),
        want=response(
            rollout=Rollout(desired=1, revision=CACHED_REV),
            status={"replicas": {"total": 1, "ready": 0}, "placement": [placement_entry("b", revision=CACHED_REV)]},
            resources={"replica-b-0": (cached_replica("b"), False)},
            conditions=[
                condition("ReplicasScheduled", "True", "Scheduled", "Scheduled 1 of 1 replicas."),
                ready_condition(0, 1),
            ],
            results=[
                result("NORMAL", "ReplicasPlaced", f"Placed 1 new replica: {replica_name('llama', 'b', 0)} on b.")
            ],
            requirements=REQUIREMENTS,
        ),
    ),
    Case(
        name="a cache that does not exist places nothing and says so",
        req=request(CACHED, required=required(clusters=[mounting("a")])),
        want=response(
            rollout=Rollout(desired=1, revision=CACHED_REV),
            status={"replicas": {"total": 0, "ready": 0}, "placement": [], "unplaced": MISSING[0]},
            conditions=[MISSING[1], ready_condition(0, 1)],
            results=[MISSING[2]],
            requirements=REQUIREMENTS,
        ),
    ),
    Case(
        name="a cache of another namespace is not the one the deployment names",
        req=request(CACHED, required=required(cache(("a", "Ready"), namespace="team-b"), clusters=[mounting("a")])),
        want=response(
            rollout=Rollout(desired=1, revision=CACHED_REV),
            status={"replicas": {"total": 0, "ready": 0}, "placement": [], "unplaced": MISSING[0]},
            conditions=[MISSING[1], ready_condition(0, 1)],
            results=[MISSING[2]],
            requirements=REQUIREMENTS,
        ),
    ),
    Case(
        name="a cache that cannot be read keeps the replica that runs",
        req=request(
            CACHED,
            observed={"replica-a-0": with_ready(cached_replica("a"))},
            required=required(cache(("", "Ready")), clusters=[mounting("a")]),
        ),
        want=response(
            rollout=Rollout(desired=1, revision=CACHED_REV),
            status={
                "replicas": {"total": 1, "ready": 1},
                "placement": [placement_entry("a", revision=CACHED_REV)],
            },
            resources={"replica-a-0": (cached_replica("a"), True)},
            conditions=[
                condition("ReplicasScheduled", "True", "Scheduled", "Scheduled 1 of 1 replicas."),
                ready_condition(1, 1),
            ],
            requirements=REQUIREMENTS,
        ),
    ),
    Case(
        name="a cache that cannot be read places no new replica and says why",
        req=request(CACHED, required=required(cache(("", "Ready")), clusters=[mounting("a")])),
        want=response(
            rollout=Rollout(desired=1, revision=CACHED_REV),
            status={"replicas": {"total": 0, "ready": 0}, "placement": [], "unplaced": UNREADABLE[0]},
            conditions=[UNREADABLE[1], ready_condition(0, 1)],
            results=[UNREADABLE[2]],
            requirements=REQUIREMENTS,
        ),
    ),
    Case(
        name="a running replica stays while the cache hydrates again, and no second one joins it",
        req=request(
            KEPT,
            observed={"replica-a-0": with_ready(cached_replica("a"))},
            required=required(cache(("a", "Hydrating")), clusters=[mounting("a")]),
        ),
        want=response(
            rollout=Rollout(desired=2, revision=CACHED_REV),
            status={
                "replicas": {"total": 1, "ready": 1},
                "placement": [placement_entry("a", revision=CACHED_REV)],
                "unplaced": HYDRATING[0],
            },
            resources={"replica-a-0": (cached_replica("a"), True)},
            conditions=[HYDRATING[1], ready_condition(1, 2)],
            results=[HYDRATING[2]],
            requirements=REQUIREMENTS,
        ),
    ),
    Case(
        name="while the cache is not answered yet nothing changes",
        req=request(
            CACHED,
            observed={"replica-a-0": with_ready(cached_replica("a"))},
            required=resolved(clusters=[mounting("a")]),
        ),
        want=response(
            status={"replicas": {"total": 1, "ready": 1}},
            resources={"replica-a-0": (cached_replica("a"), True)},
            ready=True,
            requirements=REQUIREMENTS,
        ),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_a_deployment_serving_from_a_model_cache(run_function, case: Case) -> None:
    assert as_dict(run_function(case.req)) == case.want
