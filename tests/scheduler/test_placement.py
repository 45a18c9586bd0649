"""Placement of new replicas: spread, fleet balance, best-fit pools, the ledger, engines on one pool."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from types import MappingProxyType

import pytest
from modelplane.model import Cluster, Deployment, Device, ModelReplica, Phase, Role, ServingMode, SpreadPolicy
from modelplane.scheduler import schedule

from tests.scheduler.factories import (
    IS_NIC,
    Outline,
    cluster,
    deployment,
    engine,
    gpu,
    is_model,
    leader_worker,
    member,
    nic,
    observed,
    outline,
    pool,
    request,
)


@dataclass(frozen=True, kw_only=True)
class Case:
    name: str
    deployment: Deployment
    clusters: Sequence[Cluster]
    replicas: Sequence[ModelReplica] = ()
    want: Outline


def on_model(name: str, model: str, *, copies: int = 1, phase: Phase | None = None, workers: int = 0):
    """An engine whose claiming members select GPUs of one model."""
    req = [request(selectors=[is_model(model)])]
    if workers:
        members = [member(role=Role.LEADER, requests=req), member(role=Role.WORKER, worker_nodes=workers, requests=req)]
    else:
        members = [member(requests=req)]
    return engine(name, copies=copies, phase=phase, members=members)


PREFILL_DECODE = deployment(
    serving_mode=ServingMode.PREFILL_DECODE,
    engines=[
        on_model("prefill", "H100", copies=2, phase=Phase.PREFILL),
        on_model("decode", "H200", workers=3, phase=Phase.DECODE),
    ],
)
OTHER = deployment("other", engines=[leader_worker(workers=1)])
ONE_GPU = engine(members=[member(requests=[request(count=1)])])


def sized(memory: str, *, count: int = 8) -> Device:
    """A GPU device kind publishing its memory (8 per node unless told)."""
    return replace(gpu(count=count), capacity=MappingProxyType({"memory": memory}))


# The example fleet plan's shape: a 1-GPU model between 4x L40S and 8x H100 nodes on one cluster and
# the 8x H200 nodes larger models need on the other.
L40S = pool("l40s", nodes=6, devices=[sized("48Gi", count=4)])
H100 = pool("h100", nodes=4, devices=[sized("80Gi")])
H200 = pool("h200", nodes=4, devices=[sized("141Gi")])


CASES = [
    Case(
        name="replicas spread one per cluster before any cluster takes a second",
        deployment=deployment(replicas=3),
        clusters=[cluster("c"), cluster("a"), cluster("b")],
        want=Outline(
            replicas=("a/0 main@h100", "b/0 main@h100", "c/0 main@h100"),
            created=("a/0", "b/0", "c/0"),
            message="Scheduled 3 of 3 replicas.",
        ),
    ),
    Case(
        name="spread gives way to packing when only one cluster has room",
        deployment=deployment(replicas=4),
        clusters=[cluster("a", pools=[pool("h100", nodes=3)]), cluster("b", pools=[pool("h100", nodes=1)])],
        want=Outline(
            replicas=("a/0 main@h100", "a/1 main@h100", "a/2 main@h100", "b/0 main@h100"),
            created=("a/0", "a/1", "a/2", "b/0"),
            message="Scheduled 4 of 4 replicas.",
        ),
    ),
    Case(
        name="among equally spread and equally wasteful clusters the best fit wins, keeping roomy pools whole",
        deployment=deployment(),
        clusters=[cluster("a", pools=[pool("h100", nodes=4)]), cluster("b", pools=[pool("h100", nodes=4)])],
        replicas=[observed(OTHER, cluster="a", index=0, pools="h100")],
        want=Outline(replicas=("a/0 main@h100",), created=("a/0",), message="Scheduled 1 of 1 replicas."),
    ),
    Case(
        name="free nodes in pools the deployment cannot use do not count for the fit",
        deployment=deployment(engines=[on_model("main", "H100")]),
        clusters=[
            cluster("a", pools=[pool("h100", nodes=4), pool("h200", nodes=1, model="H200")]),
            cluster("b", pools=[pool("h100", nodes=3)]),
        ],
        want=Outline(replicas=("b/0 main@h100",), created=("b/0",), message="Scheduled 1 of 1 replicas."),
    ),
    Case(
        name="equal clusters are chosen by name",
        deployment=deployment(),
        clusters=[cluster("b"), cluster("a")],
        want=Outline(replicas=("a/0 main@h100",), created=("a/0",), message="Scheduled 1 of 1 replicas."),
    ),
    Case(
        name="the best-fit pool is the one with the fewest free nodes that still fit",
        deployment=deployment(replicas=2, engines=[leader_worker(workers=1)]),
        clusters=[cluster("a", pools=[pool("big", nodes=8), pool("small", nodes=2), pool("tiny", nodes=1)])],
        want=Outline(
            replicas=("a/0 main@small", "a/1 main@big"),
            created=("a/0", "a/1"),
            message="Scheduled 2 of 2 replicas.",
        ),
    ),
    Case(
        name="equally fitting pools are chosen by name",
        deployment=deployment(),
        clusters=[cluster("a", pools=[pool("y", nodes=2), pool("x", nodes=2)])],
        want=Outline(replicas=("a/0 main@x",), created=("a/0",), message="Scheduled 1 of 1 replicas."),
    ),
    Case(
        name="a one-GPU model takes the pool whose nodes it idles least, whatever the free nodes",
        deployment=deployment(engines=[ONE_GPU]),
        clusters=[cluster("a", pools=[pool("a-big", nodes=1), pool("b-small", nodes=8, gpus=4)])],
        want=Outline(replicas=("a/0 main@b-small",), created=("a/0",), message="Scheduled 1 of 1 replicas."),
    ),
    Case(
        name="among pools idling alike the smallest adequate devices win",
        deployment=deployment(engines=[ONE_GPU]),
        clusters=[
            cluster(
                "a",
                pools=[
                    pool("a-80g", nodes=1, devices=[sized("80Gi")]),
                    pool("b-40g", nodes=8, devices=[sized("40Gi")]),
                ],
            )
        ],
        want=Outline(replicas=("a/0 main@b-40g",), created=("a/0",), message="Scheduled 1 of 1 replicas."),
    ),
    Case(
        name="a pool with a NIC the engine does not use is kept for engines that need it",
        deployment=deployment(),
        clusters=[cluster("a", pools=[pool("a-ib", nodes=1, devices=[gpu(), nic()]), pool("b-eth", nodes=8)])],
        want=Outline(replicas=("a/0 main@b-eth",), created=("a/0",), message="Scheduled 1 of 1 replicas."),
    ),
    Case(
        name="spread gives way when the other cluster would idle many more devices",
        deployment=deployment(replicas=2, engines=[ONE_GPU]),
        clusters=[cluster("a", pools=[pool("small", gpus=4)]), cluster("b", pools=[pool("huge", gpus=16)])],
        want=Outline(
            replicas=("a/0 main@small", "a/1 main@small"), created=("a/0", "a/1"), message="Scheduled 2 of 2 replicas."
        ),
    ),
    Case(
        name="spread still wins when the other cluster idles a little more",
        deployment=deployment(replicas=2, engines=[ONE_GPU]),
        clusters=[cluster("a", pools=[pool("small", gpus=4)]), cluster("b", pools=[pool("big", gpus=8)])],
        want=Outline(
            replicas=("a/0 main@small", "b/0 main@big"), created=("a/0", "b/0"), message="Scheduled 2 of 2 replicas."
        ),
    ),
    Case(
        name="a one-GPU model keeps to its smallest adequate pool rather than spread onto idle H200s",
        deployment=deployment(replicas=3, engines=[ONE_GPU]),
        clusters=[cluster("east", pools=[L40S, H100]), cluster("west", pools=[H200])],
        want=Outline(
            replicas=("east/0 main@l40s", "east/1 main@l40s", "east/2 main@l40s"),
            created=("east/0", "east/1", "east/2"),
            message="Scheduled 3 of 3 replicas.",
        ),
    ),
    Case(
        name="with its smallest pool full a one-GPU model takes the next larger devices before the largest",
        deployment=deployment(replicas=2, engines=[ONE_GPU]),
        clusters=[cluster("east", pools=[replace(L40S, nodes=1), H100]), cluster("west", pools=[H200])],
        want=Outline(
            replicas=("east/0 main@l40s", "east/1 main@h100"),
            created=("east/0", "east/1"),
            message="Scheduled 2 of 2 replicas.",
        ),
    ),
    Case(
        name="a Strict spread one-GPU model still takes the H200s where no other pool is left",
        deployment=replace(deployment(replicas=3, engines=[ONE_GPU]), spread=SpreadPolicy.STRICT),
        clusters=[cluster("east", pools=[L40S, H100]), cluster("west", pools=[H200])],
        want=Outline(
            replicas=("east/0 main@l40s", "east/1 main@l40s", "west/0 main@h200"),
            created=("east/0", "east/1", "west/0"),
            message="Scheduled 3 of 3 replicas.",
        ),
    ),
    Case(
        name="an eight-GPU model that needs no large memory leaves the H200s too",
        deployment=deployment(replicas=2),
        clusters=[cluster("east", pools=[L40S, H100]), cluster("west", pools=[H200])],
        want=Outline(
            replicas=("east/0 main@h100", "east/1 main@h100"),
            created=("east/0", "east/1"),
            message="Scheduled 2 of 2 replicas.",
        ),
    ),
    Case(
        name="a Strict spread deployment spreads whatever it idles",
        deployment=replace(deployment(replicas=2, engines=[ONE_GPU]), spread=SpreadPolicy.STRICT),
        clusters=[cluster("a", pools=[pool("small", gpus=4)]), cluster("b", pools=[pool("huge", gpus=16)])],
        want=Outline(
            replicas=("a/0 main@small", "b/0 main@huge"), created=("a/0", "b/0"), message="Scheduled 2 of 2 replicas."
        ),
    ),
    Case(
        name="one pass never overcommits a pool",
        deployment=deployment(replicas=2, engines=[leader_worker(workers=1)]),
        clusters=[cluster("a", pools=[pool("h100", nodes=3)])],
        want=Outline(
            replicas=("a/0 main@h100",),
            created=("a/0",),
            message=(
                "Scheduled 1 of 2 replicas; 0/1 clusters are available for the rest: "
                "1 had no pool with enough free nodes."
            ),
        ),
    ),
    Case(
        name="a same-named deployment in another namespace is charged but neither retained nor removed",
        deployment=deployment(replicas=1, engines=[leader_worker(workers=1)]),
        clusters=[cluster("a", pools=[pool("h100", nodes=3)]), cluster("b", pools=[pool("h100", nodes=2)])],
        replicas=[
            observed(
                deployment(namespace="team-b", engines=[leader_worker(workers=1)]), cluster="a", index=0, pools="h100"
            )
        ],
        want=Outline(replicas=("b/0 main@h100",), created=("b/0",), message="Scheduled 1 of 1 replicas."),
    ),
    Case(
        name="an engine that fits no single pool is rejected even though two pools together would fit",
        deployment=deployment(engines=[leader_worker(workers=2)]),
        clusters=[cluster("a", pools=[pool("p1", nodes=2), pool("p2", nodes=2)])],
        want=Outline(
            message=(
                "Scheduled 0 of 1 replicas; 0/1 clusters are available for the rest: "
                "1 had no pool with enough free nodes."
            ),
        ),
    ),
    Case(
        name="a claimless leader rides on its workers' pool at no node cost",
        deployment=deployment(engines=[leader_worker(workers=2, leader_claims=False)]),
        clusters=[cluster("a", pools=[pool("h100", nodes=2)])],
        want=Outline(replicas=("a/0 main@h100",), created=("a/0",), message="Scheduled 1 of 1 replicas."),
    ),
    Case(
        name="a synthetic device narrows placement to the pools that have it",
        deployment=deployment(
            engines=[engine(members=[member(requests=[request(), request("ib", count=1, selectors=[IS_NIC])])])]
        ),
        clusters=[
            cluster("a", pools=[pool("eth", nodes=8)]),
            cluster("b", pools=[pool("eth", nodes=8), pool("ib", nodes=1, devices=[gpu(), nic()])]),
        ],
        want=Outline(replicas=("b/0 main@ib",), created=("b/0",), message="Scheduled 1 of 1 replicas."),
    ),
    Case(
        name="prefill and decode engines take different pools of one cluster",
        deployment=PREFILL_DECODE,
        clusters=[cluster("a", pools=[pool("h100", nodes=2), pool("h200", nodes=4, model="H200")])],
        want=Outline(
            replicas=("a/0 prefill@h100 decode@h200",), created=("a/0",), message="Scheduled 1 of 1 replicas."
        ),
    ),
    Case(
        name="prefill and decode never split across clusters",
        deployment=PREFILL_DECODE,
        clusters=[
            cluster("a", pools=[pool("h100", nodes=8)]),
            cluster("b", pools=[pool("h200", nodes=8, model="H200")]),
        ],
        want=Outline(
            message=(
                "Scheduled 0 of 1 replicas; 0/2 clusters are available for the rest: "
                "2 had no pool matching an engine's devices."
            ),
        ),
    ),
    Case(
        name="engines sharing a pool reserve nodes for each other",
        deployment=deployment(engines=[engine("e1", copies=2), engine("e2", copies=2)]),
        clusters=[cluster("a", pools=[pool("x", nodes=3)]), cluster("b", pools=[pool("x", nodes=4)])],
        want=Outline(replicas=("b/0 e1@x e2@x",), created=("b/0",), message="Scheduled 1 of 1 replicas."),
    ),
    Case(
        name="the pool search backtracks when best fit for the first engine starves the second",
        deployment=deployment(engines=[engine("any", copies=2), on_model("a100", "A100", copies=2)]),
        clusters=[cluster("a", pools=[pool("x", nodes=2, model="A100"), pool("y", nodes=3)])],
        want=Outline(replicas=("a/0 any@y a100@x",), created=("a/0",), message="Scheduled 1 of 1 replicas."),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_placement(case: Case) -> None:
    assert outline(schedule(case.deployment, case.clusters, case.replicas)) == case.want


@dataclass(frozen=True, kw_only=True)
class DetailCase:
    name: str
    deployment: Deployment
    clusters: Sequence[Cluster]
    want: dict[str, str]


DETAIL_CASES = [
    DetailCase(
        name="the detail for an engine too big for any single pool names the roomiest pool",
        deployment=deployment(engines=[leader_worker(workers=2)]),
        clusters=[cluster("a", pools=[pool("p1", nodes=2), pool("p2", nodes=2)])],
        want={"a": "pool p1: 2 free nodes, engine main needs 3"},
    ),
    DetailCase(
        name="the detail for engines that fit singly but not together lists the pools",
        deployment=deployment(engines=[engine("e1", copies=2), engine("e2", copies=2)]),
        clusters=[cluster("a", pools=[pool("x", nodes=3)])],
        want={"a": "engines e1, e2 each fit a pool but not all together (pool x: 3 free nodes)"},
    ),
]


@pytest.mark.parametrize("case", DETAIL_CASES, ids=lambda c: c.name)
def test_capacity_details(case: DetailCase) -> None:
    got = outline(schedule(case.deployment, case.clusters, []), details=True).details
    assert got == case.want
