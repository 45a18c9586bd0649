"""Exclusive nodes over real gRPC: what an exclusive deployment composes and states, how other deployments
charge its replicas, and the pod anti-affinity its replicas render."""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane.names import LABEL_DEPLOYMENT, LABEL_DEPLOYMENT_NAMESPACE

from .conftest import as_dict
from .factories import cluster, deployment, pool_kind_of, replica_resolved, request, resolved, with_ready
from .wants import replica

RunFunction = Callable[[fnv1.RunFunctionRequest], fnv1.RunFunctionResponse]


def shared(name: str, *, nodes: int = 2) -> dict[str, Any]:
    """An InferenceCluster whose one pool of 8-GPU nodes is `packing: Devices`."""
    obj = cluster(name, nodes=nodes)
    obj["spec"]["nodePools"][0]["packing"] = "Devices"
    return obj


def exclusive(xr: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(xr)
    out["spec"]["template"]["spec"]["scheduling"] = {"exclusiveNodes": True}
    return out


def exclusive_replica(cluster_name: str, index: int = 0, **kw: Any) -> dict[str, Any]:
    """An exclusive deployment's observed ModelReplica (revision aside: only the ledger reads it here)."""
    out = replica(cluster_name, index, revision=None, **kw)
    out["spec"]["scheduling"]["exclusiveNodes"] = True
    return out


def composed(rsp: dict[str, Any]) -> dict[str, Any]:
    """Per desired ModelReplica its cluster and scheduling, the statement's options, and the Scheduled message."""
    resources = rsp["desired"].get("resources", {})
    replicas = {
        k: (r["resource"]["spec"]["clusterName"], r["resource"]["spec"]["scheduling"])
        for k, r in sorted(resources.items())
        if r["resource"]["kind"] == "ModelReplica"
    }
    demand = resources.get("demand", {}).get("resource", {}).get("spec", {})
    options = [o for e in demand.get("engines", []) for o in e["options"]]
    (scheduled,) = (c["message"] for c in rsp["conditions"] if c["type"] == "ReplicasScheduled")
    return {"replicas": replicas, "options": options, "scheduled": scheduled}


SHARED_KIND = pool_kind_of(shared("a"))
EXCLUSIVE_SCHEDULING = {"queue": "default-queue", "priorityClassName": "inference", "exclusiveNodes": True}
SHARED_SCHEDULING = {"queue": "default-queue", "priorityClassName": "inference"}


@dataclass(frozen=True)
class Case:
    name: str
    xr: dict[str, Any]
    required: dict[str, Any]
    want: dict[str, Any]


CASES = [
    Case(
        "an exclusive deployment's 1-GPU replicas take a shared node each, and it states whole nodes",
        exclusive(deployment(name="solo", replicas=3, gpus=1)),
        resolved(clusters=[shared("a")]),
        {
            "replicas": {"replica-a-0": ("a", EXCLUSIVE_SCHEDULING), "replica-a-1": ("a", EXCLUSIVE_SCHEDULING)},
            "options": [
                {
                    "poolKinds": [SHARED_KIND],
                    "nodes": 1,
                    "groups": [{"pods": 1, "devices": 1, "wholeNodes": True}],
                    "claimedDevices": 1,
                    "idleDevices": 7,
                    "spareKinds": 0,
                    "deviceSize": "0",
                }
            ],
            "scheduled": "Scheduled 2 of 3 replicas; 0/1 clusters are available for the rest: "
            "1 had no pool with enough free nodes.",
        },
    ),
    Case(
        "without exclusivity the same replicas share a node",
        deployment(name="solo", replicas=3, gpus=1),
        resolved(clusters=[shared("a", nodes=1)]),
        {
            "replicas": {f"replica-a-{i}": ("a", SHARED_SCHEDULING) for i in range(3)},
            "options": [
                {
                    "poolKinds": [SHARED_KIND],
                    "nodes": 1,
                    "groups": [{"pods": 1, "devices": 1}],
                    "claimedDevices": 1,
                    "idleDevices": 0,
                    "spareKinds": 0,
                    "deviceSize": "0",
                }
            ],
            "scheduled": "Scheduled 3 of 3 replicas.",
        },
    ),
    Case(
        "another deployment's exclusive replica holds its whole node: nothing else fits there",
        deployment(name="small", replicas=1, gpus=1),
        resolved(
            clusters=[shared("a", nodes=1)],
            replicas=[with_ready(exclusive_replica("a", deployment="solo", gpus=1))],
        ),
        {
            "replicas": {},
            "options": [
                {
                    "poolKinds": [SHARED_KIND],
                    "nodes": 1,
                    "groups": [{"pods": 1, "devices": 1}],
                    "claimedDevices": 1,
                    "idleDevices": 0,
                    "spareKinds": 0,
                    "deviceSize": "0",
                }
            ],
            "scheduled": "Scheduled 0 of 1 replicas; 0/1 clusters are available for the rest: "
            "1 had no pool with enough free nodes.",
        },
    ),
    Case(
        "an exclusive deployment does not take a node where another deployment holds devices",
        exclusive(deployment(name="solo", replicas=1, gpus=1)),
        resolved(
            clusters=[shared("a", nodes=1)],
            replicas=[with_ready(replica("a", deployment="small", gpus=1, revision=None))],
        ),
        {
            "replicas": {},
            "options": [
                {
                    "poolKinds": [SHARED_KIND],
                    "nodes": 1,
                    "groups": [{"pods": 1, "devices": 1, "wholeNodes": True}],
                    "claimedDevices": 1,
                    "idleDevices": 7,
                    "spareKinds": 0,
                    "deviceSize": "0",
                }
            ],
            "scheduled": "Scheduled 0 of 1 replicas; 0/1 clusters are available for the rest: "
            "1 had no pool with enough free nodes.",
        },
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_what_an_exclusive_deployment_composes_and_others_charge(run_function: RunFunction, case: Case) -> None:
    got = as_dict(run_function(request(case.xr, required=case.required)), demand=True)
    assert composed(got) == case.want


def _pod_affinities(rsp: dict[str, Any]) -> list[Any]:
    """The affinity of every pod template of every composed LLMInferenceService (None where it has none)."""
    out: list[Any] = []
    for _, r in sorted(rsp["desired"].get("resources", {}).items()):
        manifest = r["resource"]["spec"]["forProvider"]["manifest"]
        if manifest["kind"] == "LLMInferenceService":
            out += [manifest["spec"][w].get("affinity") for w in ("template", "worker") if w in manifest["spec"]]
    return out


EXCLUSIVE_AFFINITY = {
    "podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            {
                "labelSelector": {
                    "matchExpressions": [
                        {"key": LABEL_DEPLOYMENT, "operator": "Exists"},
                        {"key": LABEL_DEPLOYMENT, "operator": "NotIn", "values": ["solo"]},
                    ]
                },
                "namespaceSelector": {},
                "topologyKey": "kubernetes.io/hostname",
            },
            {
                "labelSelector": {
                    "matchExpressions": [
                        {"key": LABEL_DEPLOYMENT, "operator": "In", "values": ["solo"]},
                        {"key": LABEL_DEPLOYMENT_NAMESPACE, "operator": "NotIn", "values": ["team-a"]},
                    ]
                },
                "namespaceSelector": {},
                "topologyKey": "kubernetes.io/hostname",
            },
        ]
    }
}


@pytest.mark.parametrize(
    ("name", "mr", "want"),
    [
        ("an exclusive replica's pods keep other deployments off their nodes",
         exclusive_replica("a", deployment="solo"), [EXCLUSIVE_AFFINITY]),
        ("another replica's pods carry no affinity", replica("a", deployment="solo", revision=None), [None]),
    ],
)  # fmt: skip
def test_an_exclusive_replica_renders_pod_anti_affinity(
    run_function: RunFunction, name: str, mr: dict[str, Any], want: list[Any]
) -> None:
    got = as_dict(run_function(request(mr, required=replica_resolved(clusters=[shared("a")]))))
    assert _pod_affinities(got) == want, name
