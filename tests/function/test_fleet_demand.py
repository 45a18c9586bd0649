"""Other deployments' demand over real gRPC: room held for larger ones, and moves that make room.

The fleet: cluster a has one 8x H100 node, cluster b one 8x A100 node. `big` needs eight H100s
(only a fits it); `small` needs any one GPU. Each deployment reads every ModelDeployment through
the `deployments` requirement; without an answer it schedules as if alone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest
from modelplane.names import replica_name

from .conftest import as_dict
from .factories import cluster, deployment, namespace, request, resolved, with_ready
from .wants import replica

ANY_GPU = 'device.driver == "gpu.nvidia.com"'
FLEET = [cluster("a", nodes=1), cluster("b", nodes=1, product="A100")]
BIG = deployment(name="big", gpus=8)
SMALL = deployment(name="small", namespace="team-b", cel=ANY_GPU)
SMALL_ON_A = with_ready(replica("a", deployment="small", namespace="team-b", cel=ANY_GPU))
# The fleet with the H100 node on b: a successor on a sorts before the replica it replaces.
H100_ON_B = [cluster("a", nodes=1, product="A100"), cluster("b", nodes=1)]
SMALL_ON_B = with_ready(replica("b", deployment="small", namespace="team-b", cel=ANY_GPU))
SUCCESSOR_ON_A = with_ready(replica("a", deployment="small", namespace="team-b", cel=ANY_GPU), "False")
WITHDRAWN = deployment(name="big", gpus=8, replicas=0)
# Eight Ready 8-GPU replicas of one tenant fill a's eight H100 nodes; another asks for 64 of them.
EIGHT_H100 = [cluster("a", nodes=8), cluster("b", nodes=16, product="A100")]
MOVER = deployment(name="mover", namespace="team-b", replicas=8, gpus=8, cel=ANY_GPU)
MOVER_ON_A = [
    with_ready(replica("a", i, deployment="mover", namespace="team-b", gpus=8, cel=ANY_GPU)) for i in range(8)
]
HUGE = deployment(name="huge", replicas=64, gpus=8)
BROKEN = {**deployment(name="broken"), "spec": {"replicas": "many"}}
LONG_NAMED = deployment(name="x" * 64, gpus=8)  # refused by its own reconcile (not a label value)
# What a deployment too large to answer shows after its own reconcile: it places nothing.
REFUSED = deployment(
    name="huge",
    gpus=8,
    status={"conditions": [{"type": "ReplicasScheduled", "status": "False", "reason": "ResponseTooLarge"}]},
)
DELETING = {**BIG, "metadata": {**BIG["metadata"], "deletionTimestamp": "2026-01-01T00:00:00Z"}}
STILL_SCHEDULING = deployment(
    name="big",
    gpus=8,
    status={"conditions": [{"type": "ReplicasScheduled", "status": "False", "reason": "InsufficientCapacity"}]},
)


def key(cluster_name: str) -> str:
    return f"replica-{cluster_name}-0"


@dataclass(frozen=True)
class Case:
    name: str
    xr: Mapping[str, Any]
    deployments: Sequence[Mapping[str, Any]] | None  # None: the requirement is not answered
    want_replicas: tuple[str, ...]  # composition keys of the desired ModelReplicas
    want_events: tuple[tuple[str, str], ...]  # (reason, message) of every Normal event
    want_scheduled: str  # the ReplicasScheduled message
    fleet: Sequence[Mapping[str, Any]] = field(default_factory=lambda: FLEET)
    replicas: Sequence[Mapping[str, Any]] = ()
    observed: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)


SMALL_B = replica_name("small", "b", 0)
SMALL_A = replica_name("small", "a", 0)
MOVER_A0 = replica_name("mover", "a", 0)
MOVER_B0 = replica_name("mover", "b", 0)
CASES = [
    Case(
        "a small deployment leaves the only H100 node to the larger Hopper-only one",
        SMALL,
        [SMALL, BIG],
        (key("b"),),
        (("ReplicasPlaced", f"Placed 1 new replica: {SMALL_B} on b."),),
        "Scheduled 1 of 1 replicas.",
    ),
    Case(
        "without the deployments answered it schedules as if alone",
        SMALL,
        None,
        (key("a"),),
        (("ReplicasPlaced", f"Placed 1 new replica: {SMALL_A} on a."),),
        "Scheduled 1 of 1 replicas.",
    ),
    Case(
        "a deployment that cannot be read states no demand and stops nothing",
        SMALL,
        [SMALL, BROKEN],
        (key("a"),),
        (("ReplicasPlaced", f"Placed 1 new replica: {SMALL_A} on a."),),
        "Scheduled 1 of 1 replicas.",
    ),
    Case(
        "a deployment its own reconcile refuses for its name holds no room",
        SMALL,
        [SMALL, LONG_NAMED],
        (key("a"),),
        (("ReplicasPlaced", f"Placed 1 new replica: {SMALL_A} on a."),),
        "Scheduled 1 of 1 replicas.",
    ),
    Case(
        "a deployment whose own reconcile refused it (too large to answer) holds no room",
        SMALL,
        [SMALL, REFUSED],
        (key("a"),),
        (("ReplicasPlaced", f"Placed 1 new replica: {SMALL_A} on a."),),
        "Scheduled 1 of 1 replicas.",
    ),
    Case(
        "a deployment being deleted holds no room",
        SMALL,
        [SMALL, DELETING],
        (key("a"),),
        (("ReplicasPlaced", f"Placed 1 new replica: {SMALL_A} on a."),),
        "Scheduled 1 of 1 replicas.",
    ),
    Case(
        "one its own reconcile found short of capacity still does",
        SMALL,
        [SMALL, STILL_SCHEDULING],
        (key("b"),),
        (("ReplicasPlaced", f"Placed 1 new replica: {SMALL_B} on b."),),
        "Scheduled 1 of 1 replicas.",
    ),
    Case(
        "held room leaves it unplaced, and the condition says for whom",
        SMALL,
        [SMALL, BIG],
        (),
        (),
        "Scheduled 0 of 1 replicas; 0/1 clusters are available for the rest: 1 had no pool with enough free "
        "nodes. Room is held first for the missing replicas of deployments with more GPUs per replica: "
        "team-a/big (1).",
        fleet=[cluster("a", nodes=1)],
    ),
    Case(
        "a Ready replica on the only fit of blocked demand gets a successor, and stays until it is Ready",
        SMALL,
        [SMALL, BIG],
        (key("a"), key("b")),
        (
            ("ReplicasPlaced", f"Placed 1 new replica: {SMALL_B} on b."),
            (
                "MakingRoom",
                f"Moving 1 replica to make room for unplaced demand of other deployments: {SMALL_A} off a/pool "
                "for team-a/big. Each leaves once its successor elsewhere is Ready.",
            ),
        ),
        "Scheduled 1 of 1 replicas.",
        replicas=[SMALL_ON_A],
        observed={key("a"): SMALL_ON_A},
    ),
    Case(
        "demand withdrawn before a successor is Ready: the successor goes, never the Ready replica",
        SMALL,
        [SMALL, WITHDRAWN],
        (key("b"),),
        (("ReplicasRemoved", f"Removed 1 replica: {SMALL_A} from a (scaled down)."),),
        "Scheduled 1 of 1 replicas.",
        fleet=H100_ON_B,
        replicas=[SMALL_ON_B, SUCCESSOR_ON_A],
        observed={key("b"): SMALL_ON_B, key("a"): SUCCESSOR_ON_A},
    ),
    Case(
        "another tenant's huge demand moves one replica at a time, its successor within maxSurge 1",
        MOVER,
        [MOVER, HUGE],
        (*(f"replica-a-{i}" for i in range(8)), key("b")),
        (
            ("ReplicasPlaced", f"Placed 1 new replica: {MOVER_B0} on b."),
            (
                "MakingRoom",
                f"Moving 1 replica to make room for unplaced demand of other deployments: {MOVER_A0} off a/pool "
                "for team-a/huge. Each leaves once its successor elsewhere is Ready.",
            ),
        ),
        "Scheduled 8 of 8 replicas.",
        fleet=EIGHT_H100,
        replicas=MOVER_ON_A,
        observed={f"replica-a-{i}": r for i, r in enumerate(MOVER_ON_A)},
    ),
    Case(
        "the blocked deployment says which replica it waits for",
        BIG,
        [SMALL, BIG],
        (),
        (
            (
                "WaitingForRoom",
                "Waiting for 1 replica of other deployments to move and make room: team-b/small#0 off a/pool.",
            ),
        ),
        "Scheduled 0 of 1 replicas; 0/2 clusters are available for the rest: 1 had no pool matching an engine's "
        "devices, 1 had no pool with enough free nodes.",
        replicas=[SMALL_ON_A],
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_fleet_demand(run_function, case: Case) -> None:
    ns = namespace(case.xr["metadata"]["namespace"])
    required: dict[str, list[Mapping[str, Any]]] = resolved(clusters=case.fleet, replicas=case.replicas, ns=ns)
    if case.deployments is not None:
        required["deployments"] = list(case.deployments)
    got = as_dict(run_function(request(case.xr, observed=case.observed, required=required)))
    replicas = tuple(sorted(k for k in got["desired"].get("resources", {}) if k.startswith("replica-")))
    events = tuple((r["reason"], r["message"]) for r in got.get("results", []) if r["severity"] == "SEVERITY_NORMAL")
    (scheduled,) = (c["message"] for c in got["conditions"] if c["type"] == "ReplicasScheduled")
    assert (replicas, events, scheduled) == (case.want_replicas, case.want_events, case.want_scheduled)
