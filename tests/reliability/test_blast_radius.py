"""One bad object in the fleet, over real gRPC, on examples/scale-up: it never stops scheduling everywhere.

A malformed InferenceCluster is filtered with its reason and the replica already on it is kept
exactly as observed; a ModelReplica of another deployment that cannot be read (whatever its parser
raises) makes only its own cluster unavailable for new replicas. Before, either one turned every
deployment's answer into InvalidSpec (or a FATAL internal error) naming the other object.
"""

import copy
from dataclasses import dataclass
from typing import Any

import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane import api
from modelplane.names import replica_name
from modelplane.rollout import revision

from .conftest import RunFunction
from .scale_up_cases import CLUSTERS, FLEET_REPLICAS, XR, outline, scale_up

FOUR_READY_TWO = ("ReplicasReady", "FALSE", "ReplicasNotReady", "2 of 4 replicas are ready.")
REV = revision(api.parse_deployment(XR))


def _cluster_with_typo() -> list[dict[str, Any]]:
    clusters = copy.deepcopy(CLUSTERS)
    eu = next(c for c in clusters if c["metadata"]["name"] == "eu-west-1")
    eu["spec"]["nodepools"] = eu["spec"].pop("nodePools")  # a typo the XRD would have refused
    return clusters


def _other_replica(**edits: Any) -> dict[str, Any]:
    """Another deployment's replica on us-east-1's a100 pool, with `edits` to metadata.labels or spec."""
    obj = copy.deepcopy(next(r for r in FLEET_REPLICAS if r["spec"]["clusterName"] == "us-east-1"))
    obj["metadata"] = {
        "name": "chat-us-east-1-0-0000aaaa",
        "namespace": "team-b",
        "labels": {
            "modelplane.ai/deployment": "chat",
            "modelplane.ai/cluster": "us-east-1",
            "modelplane.ai/replica-index": "0",
            **edits.get("labels", {}),
        },
    }
    obj["spec"] = {**obj["spec"], **edits.get("spec", {})}
    return obj


def _modelplane_shaped() -> dict[str, Any]:
    """A replica as Modelplane writes it: selectors as `cel: <string>`, no spec.scheduling, no index label."""
    obj = _other_replica()
    del obj["metadata"]["labels"]["modelplane.ai/replica-index"]
    for engine in obj["spec"]["engines"]:
        for member in engine["members"]:
            for request in member.get("deviceRequests", []):
                request["selectors"] = [{"cel": s["cel"]["expression"]} for s in request.get("selectors", [])]
    obj["spec"].pop("scheduling", None)
    return obj


def _placed(*new: tuple[str, str, str]) -> dict[str, dict[str, Any]]:
    """The two retained replicas plus new ones (key, cluster, pool), none of them re-emitted as observed."""
    out = {
        "replica-eu-west-1-0": {"cluster": "eu-west-1", "index": "0", "pools": ["l40s"], "ready": True},
        "replica-us-east-1-0": {"cluster": "us-east-1", "index": "0", "pools": ["a100"], "ready": True},
    }
    for key, cluster, pool in new:
        out[key] = {"cluster": cluster, "index": key.rsplit("-", 1)[1], "pools": [pool], "ready": False}
    return {k: {**v, "as observed": False} for k, v in sorted(out.items())}


POOL = {"replica-ap-south-1-0": "a100", "replica-ap-south-1-1": "a100", "replica-eu-west-1-1": "l40s"}
POOL |= {"replica-eu-west-1-0": "l40s", "replica-us-east-1-0": "a100"}


def rn(key: str) -> str:
    """The replica name of composition key replica-<cluster>-<index>."""
    cluster, index = key.removeprefix("replica-").rsplit("-", 1)
    return replica_name("llama-8b", cluster, int(index))


def _status(*keys: str, ready: int = 2, held: tuple[str, ...] = ()) -> dict[str, Any]:
    """Status with every replica at the current revision but `held` (kept as observed, from before revisions)."""
    placement = [
        {
            "cluster": key.removeprefix("replica-").rsplit("-", 1)[0],
            "index": int(key.rsplit("-", 1)[1]),
            "name": rn(key),
            **({} if key in held else {"revision": REV}),
            "pools": [{"engine": "main", "pool": POOL[key], "role": "Standalone"}],
        }
        for key in sorted(keys)
    ]
    counts = {"ready": ready, "total": len(keys), "updated": len(keys) - len(held), "available": ready}
    return {"placement": placement, "replicas": counts, "revision": REV}


def _progressing(updated: int) -> tuple[str, str, str, str]:
    message = f"Rolling out revision {REV}: {updated} updated, 2 available, 4 in all for 4 replicas."
    return ("Progressing", "TRUE", "RollingOut", message)


@dataclass(frozen=True)
class Case:
    name: str
    req: fnv1.RunFunctionRequest
    want: dict[str, Any]


HELD = {"cluster": "eu-west-1", "index": "0", "pools": ["l40s"], "ready": True, "as observed": True}
US_EAST_BLOCKED = (
    f"Placed 2 new replicas: {rn('replica-ap-south-1-0')} on ap-south-1, {rn('replica-eu-west-1-1')} on eu-west-1."
)

# What the function answers when one unreadable replica of another deployment sits on us-east-1:
# everything else is scheduled, and us-east-1 takes no new replica.
US_EAST_CLOSED = {
    "conditions": [
        ("ReplicasScheduled", "TRUE", "Scheduled", "Scheduled 4 of 4 replicas."),
        FOUR_READY_TWO,
        _progressing(4),
    ],
    "results": [("NORMAL", "ReplicasPlaced", US_EAST_BLOCKED)],
    "ready": "READY_FALSE",
    "status": _status("replica-ap-south-1-0", "replica-eu-west-1-0", "replica-eu-west-1-1", "replica-us-east-1-0"),
    "replicas": _placed(("replica-ap-south-1-0", "ap-south-1", "a100"), ("replica-eu-west-1-1", "eu-west-1", "l40s")),
}

CASES = [
    Case(
        name="a malformed InferenceCluster is left out and the replica on it is kept exactly as observed",
        req=scale_up(clusters=_cluster_with_typo()),
        want={
            "conditions": [
                (
                    "ReplicasScheduled",
                    "TRUE",
                    "Scheduled",
                    "Scheduled 4 of 4 replicas. 1 replica kept as observed on eu-west-1, whose InferenceCluster "
                    "cannot be read (InferenceCluster eu-west-1: spec.nodepools: unknown field (did you mean 'nodePools'?)).",
                ),
                FOUR_READY_TWO,
                _progressing(3),
            ],
            "results": [
                (
                    "NORMAL",
                    "ReplicasPlaced",
                    f"Placed 2 new replicas: {rn('replica-ap-south-1-0')} on ap-south-1, "
                    f"{rn('replica-ap-south-1-1')} on ap-south-1.",
                )
            ],
            "ready": "READY_FALSE",
            "status": _status(
                "replica-ap-south-1-0",
                "replica-ap-south-1-1",
                "replica-eu-west-1-0",
                "replica-us-east-1-0",
                held=("replica-eu-west-1-0",),
            ),
            "replicas": {
                **_placed(
                    ("replica-ap-south-1-0", "ap-south-1", "a100"), ("replica-ap-south-1-1", "ap-south-1", "a100")
                ),
                "replica-eu-west-1-0": HELD,
            },
        },
    ),
    Case(
        name="another deployment's replica with an unreadable index label only closes its cluster to new replicas",
        req=scale_up(replicas=[*FLEET_REPLICAS, _other_replica(labels={"modelplane.ai/replica-index": "²"})]),
        want=US_EAST_CLOSED,
    ),
    Case(
        name="another deployment's replica without engines only closes its cluster to new replicas",
        req=scale_up(replicas=[*FLEET_REPLICAS, _other_replica(spec={"engines": []})]),
        want=US_EAST_CLOSED,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_one_bad_fleet_object_does_not_stop_scheduling(grpc_function: RunFunction, case: Case) -> None:
    assert outline(grpc_function(case.req)) == case.want


def test_a_fleet_migrating_from_modelplane_keeps_scheduling(grpc_function: RunFunction) -> None:
    """A Modelplane-shaped replica (selectors as `cel: <string>`) of another deployment: whether it can be
    read or not, this deployment still places all four replicas and keeps the two it has."""
    got = outline(grpc_function(scale_up(replicas=[*FLEET_REPLICAS, _modelplane_shaped()])))
    kept = {k: v for k, v in got["replicas"].items() if k in ("replica-eu-west-1-0", "replica-us-east-1-0")}
    assert (got["conditions"][0][:3], len(got["replicas"]), kept) == (
        ("ReplicasScheduled", "TRUE", "Scheduled"),
        4,
        _placed(),
    )
