"""What a deployment states of its demand (scheduler/state.py), and how others read it (scheduler/demand.py)."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, replace

import pytest
from modelplane.devices import DeviceMatcher
from modelplane.model import Cluster, Deployment, DeviceGroup, NodePool, PoolCharge, PoolPacking, Stack
from modelplane.scheduler import state
from modelplane.scheduler.demand import Demand
from modelplane.scheduler.engines import EngineOptions
from modelplane.scheduler.ledger import Ledger
from modelplane.scheduler.state import state_demand, statements
from modelplane.stated import StatedDemand, StatedEngine, StatedOption, pool_kind, withdrawn

from tests.scheduler.factories import (
    cluster,
    deployment,
    engine,
    gpu_engines,
    leader_worker,
    member,
    pool,
    request,
    requirement,
    selector,
    taint,
)

H100 = pool("h100", nodes=2)
A100 = pool("a100", nodes=2, model="A100")
ONE_GPU = PoolCharge(nodes=1, groups=(DeviceGroup(pods=1, devices=1),))
EIGHT_GPUS = PoolCharge(nodes=1, groups=(DeviceGroup(pods=1, devices=8),))


def option(pool: NodePool, *, charge: PoolCharge = ONE_GPU, claimed: int = 1, idle: int = 7) -> StatedOption:
    return StatedOption(kind=pool_kind(pool), cost=charge.nodes, charge=charge, claimed=claimed, idle=idle)


def stated(
    d: Deployment, *options: StatedOption, clusters: tuple[str, ...] = (), all_but: bool = False, devices: int = 1
) -> StatedDemand:
    return StatedDemand(
        namespace=d.namespace,
        name=d.name,
        replicas=d.replicas,
        devices=devices,
        clusters=clusters,
        all_but=all_but,
        engines=(StatedEngine(name="main", options=tuple(sorted(options, key=lambda o: o.kind))),),
    )


SMALL = deployment("small", engines=gpu_engines(1))
GANG = deployment("gang", engines=[leader_worker(workers=1)])
GANG_COPY = PoolCharge(nodes=2, groups=(DeviceGroup(pods=2, devices=8),))  # a leader and a worker, 8 GPUs each
SHARED = replace(pool("shared", nodes=2), packing=PoolPacking.DEVICES)
SOLO = deployment("solo", engines=gpu_engines(1), exclusive_nodes=True)
WHOLE_NODE = PoolCharge(nodes=1, groups=(DeviceGroup(pods=1, devices=1, whole=True),))


@dataclass(frozen=True)
class Case:
    name: str
    deployment: Deployment
    clusters: Sequence[Cluster]
    want: StatedDemand


GOLD = selector(labels={"tier": "gold"})
CASES = [
    Case(
        "one option per kind of pool, and the clusters it may use named once",
        SMALL,
        [cluster("c", pools=[H100]), cluster("a", pools=[H100, A100]), cluster("b", pools=[A100])],
        stated(SMALL, option(A100), option(H100), clusters=(), all_but=True),
    ),
    Case(
        "clusters its selector, its tolerations or its tenancy leave out are not stated",
        replace(SMALL, cluster_selector=GOLD, namespace_labels={"team": "x"}),
        [
            cluster("a", pools=[H100], labels={"tier": "gold"}),
            cluster("b", pools=[H100], labels={"tier": "silver"}),
            cluster("c", pools=[H100], labels={"tier": "gold"}, taints=[taint("maintenance")]),
            cluster("d", pools=[H100], labels={"tier": "gold"}, allowed_namespaces=["team-z"]),
            cluster(
                "e",
                pools=[H100],
                labels={"tier": "gold"},
                allowed_namespace_selector=selector(expressions=[requirement("team", "NotIn", "x")]),
            ),
        ],
        stated(SMALL, option(H100), clusters=("a",)),
    ),
    Case(
        "where it may use most of the fleet it names the clusters it may not",
        replace(SMALL, cluster_selector=GOLD),
        [cluster(name, pools=[H100], labels={"tier": "gold" if name != "c" else "silver"}) for name in "abcd"],
        stated(SMALL, option(H100), clusters=("c",), all_but=True),
    ),
    Case(
        "a cluster that is not Ready is still stated: it takes the demand again once Ready",
        SMALL,
        [cluster("a", pools=[H100], ready=False), cluster("b", pools=[H100], taints=[taint("x")])],
        stated(SMALL, option(H100), clusters=("a",)),
    ),
    Case(
        "a pool no engine matches is not stated, and an engine with no pool states no demand",
        deployment("big", engines=gpu_engines(8, model="H100")),
        [cluster("a", pools=[A100])],
        StatedDemand(
            namespace="team-a",
            name="big",
            replicas=1,
            devices=8,
            all_but=True,  # its filters admit every cluster; no pool kind fits its engine
            engines=(StatedEngine(name="main", options=()),),
        ),
    ),
    Case(
        "a multi-node deployment does not state a Dynamo cluster, so no one holds room for it there",
        GANG,
        [
            cluster("a", pools=[H100], stack=Stack.DYNAMO),
            cluster("b", pools=[H100]),
            cluster("c", pools=[H100], stack=Stack.DYNAMO),
        ],
        StatedDemand(
            namespace="team-a",
            name="gang",
            replicas=1,
            devices=16,
            clusters=("b",),
            engines=(
                StatedEngine(
                    name="main",
                    options=(option(H100, charge=GANG_COPY, claimed=16, idle=0),),
                ),
            ),
        ),
    ),
    Case(
        "a cluster listed twice is stated once",
        deployment("big", engines=gpu_engines(8)),
        [cluster("a", pools=[H100]), cluster("a", pools=[H100]), cluster("b", pools=[A100], ready=False)],
        stated(
            deployment("big", engines=gpu_engines(8)),
            option(H100, charge=EIGHT_GPUS, claimed=8, idle=0),
            option(A100, charge=EIGHT_GPUS, claimed=8, idle=0),
            clusters=(),
            all_but=True,
            devices=8,
        ),
    ),
    Case(
        "a deployment on a shared pool states a device, and the devices beside it as others' to use",
        SMALL,
        [cluster("a", pools=[SHARED])],
        stated(SMALL, option(SHARED, idle=0), all_but=True),
    ),
    Case(
        "an exclusive deployment states that its pods hold whole nodes, idling the devices beside them",
        SOLO,
        [cluster("a", pools=[SHARED])],
        stated(SOLO, option(SHARED, charge=WHOLE_NODE, idle=7), all_but=True),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_what_a_deployment_states(case: Case) -> None:
    matcher = DeviceMatcher()
    fleet = sorted(case.clusters, key=lambda c: c.name)
    assert state_demand(case.deployment, fleet, EngineOptions(case.deployment, matcher)) == case.want


def test_the_statement_does_not_depend_on_the_order_of_the_fleet() -> None:
    fleet = [cluster(f"c{i}", pools=[H100, A100] if i % 2 else [A100]) for i in range(12)]
    shuffled = list(fleet)
    random.Random(7).shuffle(shuffled)
    assert statements([SMALL], shuffled) == statements([SMALL], fleet)


def test_a_statement_past_its_bound_names_the_first_clusters_and_says_it_was_cut(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(state, "MAX_CLUSTERS", 2)
    smaller = replace(SMALL, cluster_selector=GOLD)
    fleet = [cluster(n, pools=[H100], labels={"tier": "gold" if n < "f" else "silver"}) for n in "abcdefghij"]
    got = statements([smaller], fleet)
    assert got == (replace(stated(smaller, option(H100), clusters=("a", "b")), truncated=True),)


def test_a_deployment_whose_selector_does_not_compile_states_no_demand() -> None:
    bad = deployment("bad", engines=[engine(members=[member(requests=[request(selectors=("device.nope ==",))])])])
    assert statements([bad], [cluster("a", pools=[H100])]) == (withdrawn("team-a", "bad"),)


@dataclass(frozen=True)
class ReadCase:
    name: str
    demand: StatedDemand
    clusters: Sequence[Cluster]
    want: tuple[str, ...]  # clusters a replica is placed on, in order, on an empty ledger


BIG_ON_A = stated(
    deployment("big", replicas=2), option(H100, charge=EIGHT_GPUS, claimed=8, idle=0), clusters=("a", "b"), devices=8
)
READ_CASES = [
    ReadCase(
        "stated demand is placed by the same bind, spreading over the clusters it lists",
        BIG_ON_A,
        [cluster("a", pools=[H100]), cluster("b", pools=[H100])],
        ("a", "b"),
    ),
    ReadCase(
        "a cluster the statement does not name, or whose pools are of no kind it names, takes nothing",
        BIG_ON_A,
        [cluster("a", pools=[A100]), cluster("z", pools=[H100])],
        (),
    ),
    ReadCase(
        "every cluster but those named, when the statement says so",
        replace(BIG_ON_A, clusters=("a",), all_but=True),
        [cluster("a", pools=[H100]), cluster("z", pools=[H100])],
        ("z", "z"),
    ),
    ReadCase(
        "a cluster that is not Ready takes nothing, whatever the statement says",
        BIG_ON_A,
        [cluster("a", pools=[H100], ready=False), cluster("b", pools=[H100])],
        ("b", "b"),
    ),
    ReadCase(
        "a cluster whose allowedNamespaces leaves the owner's namespace out is never used",
        BIG_ON_A,
        [cluster("a", pools=[H100], allowed_namespaces=["team-z"]), cluster("b", pools=[H100])],
        ("b", "b"),
    ),
    ReadCase(
        "stated 1-GPU replicas share the nodes of a shared pool",
        stated(deployment("small", replicas=3), option(SHARED, idle=0), clusters=("a",)),
        [cluster("a", pools=[SHARED])],
        ("a", "a", "a"),
    ),
    ReadCase(
        "stated exclusive replicas take a whole node of a shared pool each",
        stated(deployment("solo", replicas=3), option(SHARED, charge=WHOLE_NODE, idle=7), clusters=("a",)),
        [cluster("a", pools=[SHARED])],
        ("a", "a"),
    ),
    ReadCase(
        "an engine with no option places nothing anywhere",
        StatedDemand(namespace="team-a", name="x", replicas=2, engines=(StatedEngine(name="main", options=()),)),
        [cluster("a", pools=[H100])],
        (),
    ),
]


@pytest.mark.parametrize("case", READ_CASES, ids=lambda c: c.name)
def test_how_others_place_stated_demand(case: ReadCase) -> None:
    placed = Demand(case.demand).place(Ledger(case.clusters), case.clusters, {}, count=case.demand.replicas)
    assert tuple(p.cluster.name for p in placed.placements) == case.want
