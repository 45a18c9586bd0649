"""Exclusive nodes (`scheduling.exclusiveNodes`): on a `packing: Devices` pool a deployment's pods hold
whole nodes, no other deployment's pods beside them, and never land beside another's."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from modelplane.model import Cluster, Deployment, DeviceGroup, ModelReplica, NodePool, PoolCharge, PoolPacking
from modelplane.scheduler import schedule
from modelplane.scheduler.capacity import DeviceCapacity
from modelplane.scheduler.ledger import Ledger

from tests.scheduler.factories import Outline, cluster, deployment, engine, member, observed, outline, pool, request
from tests.scheduler.test_shared_pools import gang, gpus


def shared(name: str, *, nodes: int = 2, gpus: int = 8) -> NodePool:
    return replace(pool(name, nodes=nodes, gpus=gpus), packing=PoolPacking.DEVICES)


@dataclass(frozen=True)
class HoldsCase:
    name: str
    groups: tuple[tuple[int, int, bool], ...]  # (pods, devices, whole) per group
    want: bool
    nodes: int = 2
    per_node: int = 8


HOLDS = (
    HoldsCase(name="two exclusive 1-GPU pods take both nodes", groups=((1, 1, True), (1, 1, True)), want=True),
    HoldsCase(name="no other pod fits beside two exclusive pods on two nodes",
              groups=((1, 1, True), (1, 1, True), (1, 1, False)), want=False),
    HoldsCase(name="an exclusive pod and a shared pod fit two nodes whatever lands first",
              groups=((1, 1, True), (1, 1, False)), want=True),
    HoldsCase(name="shared pods that could touch every node could leave an exclusive pod none",
              groups=((1, 1, True), *((1, 1, False),) * 7), want=False),
    HoldsCase(name="an exclusive pod and an 8-GPU pod take a node each",
              groups=((1, 1, True), (1, 8, False)), want=True),
    HoldsCase(name="a one-device pod on each node leaves an exclusive pod nowhere",
              groups=((1, 1, True), (1, 1, False), (1, 1, False)), want=False),
    HoldsCase(name="an exclusive gang of two needs two empty nodes", groups=((2, 1, True),), want=True),
    HoldsCase(name="an exclusive gang of two beside any shared pod is too many",
              groups=((2, 1, True), (1, 1, False)), want=False),
    HoldsCase(name="the same pods without exclusivity share one node", groups=((1, 1, False),) * 3, want=True),
)  # fmt: skip


@pytest.mark.parametrize("case", HOLDS, ids=lambda c: c.name)
def test_what_a_shared_pool_holds_with_exclusive_pods(case: HoldsCase) -> None:
    cap = DeviceCapacity(nodes=case.nodes, per_node=case.per_node)
    cap.take(PoolCharge(groups=tuple(DeviceGroup(pods=p, devices=d, whole=w) for p, d, w in case.groups)))
    assert cap.holds() is case.want


def exclusive(name: str, *, replicas: int = 1, per_pod: int = 1) -> Deployment:
    return deployment(name, replicas=replicas, engines=[gpus(per_pod)], exclusive_nodes=True)


def kserve(c: Cluster, version: str) -> Cluster:
    return replace(c, kserve_version=version)


NO_ROOM = "Scheduled {} of {} replicas; 0/1 clusters are available for the rest: 1 had no pool with enough free nodes."


@dataclass(frozen=True, kw_only=True)
class Case:
    name: str
    deployments: Sequence[Deployment]  # scheduled in turn, each seeing the replicas before it
    clusters: Sequence[Cluster]
    want: Sequence[Outline]


CASES = [
    Case(
        name="an exclusive deployment's 1-GPU replicas take a shared node each, leaving no room for others",
        deployments=[exclusive("solo", replicas=2), deployment("small", engines=[gpus(1)])],
        clusters=[cluster("a", pools=[shared("h100")])],
        want=[
            Outline(replicas=("a/0 main@h100", "a/1 main@h100"), created=("a/0", "a/1"),
                    message="Scheduled 2 of 2 replicas."),
            Outline(message=NO_ROOM.format(0, 1)),
        ],
    ),
    Case(
        name="an exclusive deployment does not take a node where another deployment holds devices",
        deployments=[deployment("small", engines=[gpus(1)]), exclusive("solo", replicas=2)],
        clusters=[cluster("a", pools=[shared("h100")])],
        want=[
            Outline(replicas=("a/0 main@h100",), created=("a/0",), message="Scheduled 1 of 1 replicas."),
            Outline(replicas=("a/0 main@h100",), created=("a/0",), message=NO_ROOM.format(1, 2)),
        ],
    ),
    Case(
        name="without exclusivity the same replicas share one node and leave room",
        deployments=[deployment("solo", replicas=2, engines=[gpus(1)]), deployment("small", engines=[gpus(1)])],
        clusters=[cluster("a", pools=[shared("h100")])],
        want=[
            Outline(replicas=("a/0 main@h100", "a/1 main@h100"), created=("a/0", "a/1"),
                    message="Scheduled 2 of 2 replicas."),
            Outline(replicas=("a/0 main@h100",), created=("a/0",), message="Scheduled 1 of 1 replicas."),
        ],
    ),
    Case(
        name="on a Nodes pool an exclusive deployment costs what any other does",
        deployments=[exclusive("solo"), deployment("small", engines=[gpus(1)])],
        clusters=[cluster("a", pools=[pool("h100", nodes=2)])],
        want=[
            Outline(replicas=("a/0 main@h100",), created=("a/0",), message="Scheduled 1 of 1 replicas."),
            Outline(replicas=("a/0 main@h100",), created=("a/0",), message="Scheduled 1 of 1 replicas."),
        ],
    ),
    Case(
        name="an exclusive deployment prefers a Nodes pool to idling a shared one's devices alike",
        deployments=[exclusive("solo")],
        clusters=[cluster("a", pools=[shared("a-shared"), pool("b-nodes", nodes=2)])],
        want=[Outline(replicas=("a/0 main@b-nodes",), created=("a/0",), message="Scheduled 1 of 1 replicas.")],
    ),
    Case(
        name="a KServe 0.16 cluster cannot keep others off: the exclusive deployment goes elsewhere",
        deployments=[exclusive("solo", replicas=2)],
        clusters=[
            kserve(cluster("a", pools=[shared("h100")]), "0.16"),
            kserve(cluster("b", pools=[shared("h100", nodes=1)]), "0.17"),
        ],
        want=[
            Outline(
                replicas=("b/0 main@h100",),
                created=("b/0",),
                message=(
                    "Scheduled 1 of 2 replicas; 0/2 clusters are available for the rest: "
                    "1 could not keep other deployments off exclusive nodes, 1 had no pool with enough free nodes."
                ),
                details={
                    "a": "KServe 0.16 does not label the pods it creates, so no pod anti-affinity can tell "
                    "deployments apart; exclusive nodes need KServe 0.17 or later",
                    "b": "pool h100: 0 free devices on 1 shared nodes, engine main needs 1 pod of 1 device",
                },
            )
        ],
    ),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_exclusive_placement(case: Case) -> None:
    fleet: list[ModelReplica] = []
    got: list[Outline] = []
    for dep in case.deployments:
        result = schedule(dep, case.clusters, fleet)
        got.append(outline(result, details=bool(case.want[len(got)].details)))
        fleet += [r for r in result.replicas if r.deployment == dep.name]
    assert got == list(case.want)


@dataclass(frozen=True)
class LedgerCase:
    name: str
    replica: ModelReplica
    want: dict[str, int]  # free whole nodes per pool after charging it


def _gang_observed(*, exclusive_nodes: bool) -> ModelReplica:
    dep = deployment("g", engines=[gang(2, workers=1)], exclusive_nodes=exclusive_nodes)
    return observed(dep, cluster="a", index=0, pools="p")


LEDGER = (
    LedgerCase(name="an observed exclusive 1-GPU replica is charged a whole shared node",
               replica=observed(exclusive("solo"), cluster="a", index=0, pools="p"), want={"p": 3}),
    LedgerCase(name="an observed 1-GPU replica is charged its device only",
               replica=observed(deployment("x", engines=[gpus(1)]), cluster="a", index=0, pools="p"), want={"p": 3}),
    LedgerCase(name="an observed exclusive gang is charged a whole node per pod",
               replica=_gang_observed(exclusive_nodes=True), want={"p": 2}),
    LedgerCase(name="an observed gang of 2-GPU pods fills less than a node's devices per pod",
               replica=_gang_observed(exclusive_nodes=False), want={"p": 3}),
)  # fmt: skip


@pytest.mark.parametrize("case", LEDGER, ids=lambda c: c.name)
def test_the_ledger_charges_observed_exclusive_replicas_whole_nodes(case: LedgerCase) -> None:
    ledger = Ledger([cluster("a", pools=[shared("p", nodes=4)])])
    ledger.charge_replica(case.replica)
    assert dict(ledger.free("a")) == case.want


def test_an_exclusive_replica_leaves_a_shared_pool_no_device_its_nodes_hold() -> None:
    """free_nodes rounds down: the devices say what the exclusive pod's node really holds."""
    ledger = Ledger([cluster("a", pools=[shared("p", nodes=2)])])
    ledger.charge_replica(observed(exclusive("solo"), cluster="a", index=0, pools="p"))
    assert ledger.view("a")["p"].describe() == "8 free devices on 2 shared nodes"


# --- property: what the cluster scheduler does with the anti-affinity never overfills or mixes a node -----


@st.composite
def shapes(draw: st.DrawFn, name: str) -> Deployment:
    per_pod = draw(st.sampled_from((1, 2, 4, 8)))
    workers = draw(st.integers(0, 1))
    solo = draw(st.booleans())
    eng = gang(per_pod, workers) if workers else engine(members=[member(requests=[request(count=per_pod)])])
    return deployment(name, replicas=draw(st.integers(1, 4)), engines=[eng], exclusive_nodes=solo)


def _any_fit(nodes: int, per_node: int, pods: list[tuple[str, bool, DeviceGroup]], rng: random.Random) -> bool:
    """A random any-fit scheduler honouring the anti-affinity: an exclusive deployment's pod only on a node
    holding no other deployment's pod, and no pod on a node holding another exclusive deployment's pod."""
    free = [per_node] * nodes
    owners: list[set[str]] = [set() for _ in range(nodes)]
    exclusive_on: list[set[str]] = [set() for _ in range(nodes)]
    for owner, solo, group in rng.sample(pods, len(pods)):
        room = [
            i
            for i in range(nodes)
            if free[i] >= group.devices and not (exclusive_on[i] - {owner}) and (not solo or not (owners[i] - {owner}))
        ]
        if len(room) < group.pods:
            return False
        for i in rng.sample(room, group.pods):
            free[i] -= group.devices
            owners[i].add(owner)
            if solo:
                exclusive_on[i].add(owner)
    return True


@settings(max_examples=150, deadline=None)
@given(
    st.integers(1, 5),
    st.integers(0, 4).flatmap(lambda n: st.tuples(*(shapes(f"d{i}") for i in range(n + 1)))),
    st.randoms(use_true_random=False),
)
def test_no_exclusive_node_is_ever_shared_or_overfilled(nodes: int, deps: tuple[Deployment, ...], rnd) -> None:
    clusters = [cluster("c", pools=[shared("p", nodes=nodes)])]
    fleet: list[ModelReplica] = []
    for dep in deps:
        fleet += [r for r in schedule(dep, clusters, fleet).replicas if r.deployment == dep.name]
    pods = [
        (r.deployment, r.exclusive_nodes, g) for r in fleet for g in r.charges_by_pool().get("p", PoolCharge()).groups
    ]
    for _ in range(20):
        assert _any_fit(nodes, 8, pods, rnd)
