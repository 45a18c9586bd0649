"""`packing: Devices` pools: pods of several replicas share nodes, and the fleet never promises more
than any bin-packing scheduler of the cluster can place."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from modelplane.model import Cluster, DeviceGroup, ModelReplica, NodePool, PoolCharge, PoolPacking, Role
from modelplane.scheduler import schedule
from modelplane.scheduler.capacity import DeviceCapacity, shares_devices

from tests.scheduler.factories import (
    Outline,
    cluster,
    deployment,
    engine,
    gpu,
    member,
    nic,
    outline,
    pool,
    request,
)


def shared(name: str, *, nodes: int = 2, gpus: int = 8) -> NodePool:
    return replace(pool(name, nodes=nodes, gpus=gpus), packing=PoolPacking.DEVICES)


def gpus(count: int, *, copies: int = 1, name: str = "main"):
    return engine(name, copies=copies, members=[member(requests=[request(count=count)])])


def gang(count: int, workers: int):
    req = [request(count=count)]
    return engine(
        members=[member(role=Role.LEADER, requests=req), member(role=Role.WORKER, worker_nodes=workers, requests=req)]
    )


@dataclass(frozen=True)
class HoldsCase:
    name: str
    groups: tuple[tuple[int, int], ...]  # (pods, devices) per group
    want: bool
    nodes: int = 2
    per_node: int = 8


HOLDS = (
    HoldsCase(name="one 4-GPU pod and four 1-GPU pods fill two nodes whatever lands where",
              groups=((1, 4), (1, 1), (1, 1), (1, 1), (1, 1)), want=True),
    HoldsCase(name="sixteen 1-GPU pods fill two 8-GPU nodes", groups=((1, 1),) * 16, want=True),
    HoldsCase(name="no more devices than the nodes have", groups=((1, 1),) * 17, want=False),
    HoldsCase(name="two 4-GPU and eight 1-GPU pods could leave a 4-GPU pod no node",
              groups=((1, 4), (1, 4), *((1, 1),) * 8), want=False),
    HoldsCase(name="an 8-GPU pod needs a node the others cannot all touch", groups=((1, 8), (1, 1)), want=True),
    HoldsCase(name="an 8-GPU pod and one 1-GPU pod per other node is too many", groups=((1, 8), (1, 1), (1, 1)),
              want=False),
    HoldsCase(name="a two-pod gang needs two nodes", groups=((2, 8),), want=True),
    HoldsCase(name="a two-pod gang on two nodes leaves no room for even one device", groups=((2, 8), (1, 1)),
              want=False),
    HoldsCase(name="a gang wider than the pool never fits", groups=((3, 1),), want=False),
    HoldsCase(name="4-GPU pods only leave half-full nodes the next one still fits", groups=((1, 4),) * 4, want=True),
)  # fmt: skip


@pytest.mark.parametrize("case", HOLDS, ids=lambda c: c.name)
def test_what_a_shared_pool_holds(case: HoldsCase) -> None:
    cap = DeviceCapacity(nodes=case.nodes, per_node=case.per_node)
    cap.take(PoolCharge(groups=tuple(DeviceGroup(pods=p, devices=d) for p, d in case.groups)))
    assert cap.holds() is case.want


@dataclass(frozen=True, kw_only=True)
class Case:
    name: str
    deployments: Sequence  # scheduled in turn, each seeing the replicas before it
    clusters: Sequence[Cluster]
    want: Sequence[Outline]


CASES = [
    Case(
        name="small replicas share the nodes of a Devices pool",
        deployments=[deployment("big", engines=[gpus(4)]), deployment("small", replicas=4, engines=[gpus(1)])],
        clusters=[cluster("a", pools=[shared("h100")])],
        want=[
            Outline(replicas=("a/0 main@h100",), created=("a/0",), message="Scheduled 1 of 1 replicas."),
            Outline(
                replicas=("a/0 main@h100", "a/1 main@h100", "a/2 main@h100", "a/3 main@h100"),
                created=("a/0", "a/1", "a/2", "a/3"),
                message="Scheduled 4 of 4 replicas.",
            ),
        ],
    ),
    Case(
        name="the same replicas on a Nodes pool take a node each",
        deployments=[deployment("big", engines=[gpus(4)]), deployment("small", replicas=4, engines=[gpus(1)])],
        clusters=[cluster("a", pools=[pool("h100", nodes=2)])],
        want=[
            Outline(replicas=("a/0 main@h100",), created=("a/0",), message="Scheduled 1 of 1 replicas."),
            Outline(
                replicas=("a/0 main@h100",),
                created=("a/0",),
                message=(
                    "Scheduled 1 of 4 replicas; 0/1 clusters are available for the rest: "
                    "1 had no pool with enough free nodes."
                ),
            ),
        ],
    ),
    Case(
        name="a gang keeps one pod per node: a 2-pod gang of 1 GPU each does not fit one shared node",
        deployments=[deployment(engines=[gang(1, workers=1)])],
        clusters=[cluster("a", pools=[shared("h100", nodes=1)])],
        want=[
            Outline(
                message=(
                    "Scheduled 0 of 1 replicas; 0/1 clusters are available for the rest: "
                    "1 had no pool with enough free nodes."
                ),
                details={"a": "pool h100: 8 free devices on 1 shared nodes, engine main needs 2 pods of 1 device"},
            )
        ],
    ),
    Case(
        name="a pool with two DRA device kinds is counted in whole nodes",
        deployments=[deployment("small", replicas=2, engines=[gpus(1)])],
        clusters=[
            cluster(
                "a",
                pools=[
                    replace(
                        pool("h100", nodes=1, devices=[gpu(), replace(gpu(), name="nic", count=8)]),
                        packing=PoolPacking.DEVICES,
                    )
                ],
            )
        ],
        want=[
            Outline(
                replicas=("a/0 main@h100",),
                created=("a/0",),
                message=(
                    "Scheduled 1 of 2 replicas; 0/1 clusters are available for the rest: "
                    "1 had no pool with enough free nodes."
                ),
            )
        ],
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_shared_pool_placement(case: Case) -> None:
    fleet: list[ModelReplica] = []
    got: list[Outline] = []
    for dep in case.deployments:
        result = schedule(dep, case.clusters, fleet)
        got.append(outline(result, details=bool(case.want[len(got)].details)))
        fleet += [r for r in result.replicas if r.deployment == dep.name]
    assert got == list(case.want)


def test_a_synthetic_nic_does_not_make_a_pool_count_nodes() -> None:
    assert shares_devices(replace(pool("ib", devices=[gpu(), nic()]), packing=PoolPacking.DEVICES))


# --- property: no node's devices are ever exceeded, whatever the cluster's scheduler does ---------


@st.composite
def shapes(draw: st.DrawFn, name: str):
    per_pod = draw(st.sampled_from((1, 2, 4, 8)))
    workers = draw(st.integers(0, 2))
    copies = draw(st.integers(1, 3))
    if workers:
        return deployment(name, replicas=draw(st.integers(1, 4)), engines=[gang(per_pod, workers)])
    return deployment(name, replicas=draw(st.integers(1, 6)), engines=[gpus(per_pod, copies=copies)])


def _any_fit(pool_nodes: int, per_node: int, groups: list[DeviceGroup], rng: random.Random) -> bool:
    """A random any-fit scheduler: each group's pods on distinct random nodes with room, in random order."""
    free = [per_node] * pool_nodes
    for group in rng.sample(groups, len(groups)):
        room = [i for i, f in enumerate(free) if f >= group.devices]
        if len(room) < group.pods:
            return False
        for i in rng.sample(room, group.pods):
            free[i] -= group.devices
    return True


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.integers(1, 5), min_size=1, max_size=3),
    st.integers(0, 5).flatmap(lambda n: st.tuples(*(shapes(f"d{i}") for i in range(n + 1)))),
    st.randoms(use_true_random=False),
)
def test_no_node_of_a_devices_pool_is_ever_overfilled(nodes: list[int], deps, rnd: random.Random) -> None:
    clusters = [cluster(f"c{i}", pools=[shared("p", nodes=n)]) for i, n in enumerate(nodes)]
    fleet: list[ModelReplica] = []
    for dep in deps:
        fleet += [r for r in schedule(dep, clusters, fleet).replicas if r.deployment == dep.name]
    for c in clusters:
        groups = [g for r in fleet if r.cluster == c.name for g in r.charges_by_pool().get("p", PoolCharge()).groups]
        for _ in range(20):
            assert _any_fit(c.pools[0].nodes, 8, groups, rnd)
