"""The fleet view model: pool occupancy after a placement, per-cluster verdicts and scores."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import pytest
from modelplane.fleet import ClusterView, FleetView, Origin, build
from modelplane.fleet.text import cluster_rows
from modelplane.model import Cluster, Deployment, ModelReplica, Phase, PoolPacking, ServingMode, TaintEffect
from modelplane.scheduler import Code, RemovedReplica, ScheduleResult, schedule

from tests.fleet.factories import chip, pool_view, rejected, result, score
from tests.scheduler.factories import (
    cluster,
    deployment,
    engine,
    leader_worker,
    member,
    observed,
    pool,
    request,
    taint,
)

DEP = deployment("llm", namespace="team-a", replicas=1)
OTHER = deployment("chat", namespace="team-b")
SCALED_TO_ZERO = deployment("llm", namespace="team-a", replicas=0)
PD = deployment(
    "pd",
    namespace="team-a",
    serving_mode=ServingMode.PREFILL_DECODE,
    engines=[engine("prefill", phase=Phase.PREFILL), engine("decode", phase=Phase.DECODE)],
)
GANG = deployment("gang", namespace="team-a", engines=[leader_worker("main", workers=3, copies=2)])

THEIRS_A0 = observed(OTHER, cluster="a", index=0, pools="h100")
THEIRS_A1 = observed(OTHER, cluster="a", index=1, pools="h100")
OURS_A0 = observed(DEP, cluster="a", index=0, pools="h100")
OURS_B0 = observed(DEP, cluster="b", index=0, pools="h100")
PD_A0 = observed(PD, cluster="a", index=0, pools={"prefill": "h100", "decode": "h200"})
GANG_A0 = observed(GANG, cluster="a", index=0, pools="ib")


def cluster_view(
    name: str, *pools, ready: bool = True, taints: Sequence[str] = (), verdict=None, score=None, hosts: int = 0
) -> ClusterView:
    return ClusterView(
        name=name, ready=ready, taints=tuple(taints), pools=tuple(pools), verdict=verdict, score=score, hosts=hosts
    )


def view(
    dep: Deployment,
    *clusters: ClusterView,
    placed: int,
    summary: str,
    owners: Sequence[str] = (),
    removed: Sequence[RemovedReplica] = (),
    scores=(),
    scheduled: bool = True,
) -> FleetView:
    return FleetView(
        namespace=dep.namespace,
        name=dep.name,
        desired=dep.replicas,
        placed=placed,
        clusters=tuple(clusters),
        removed=tuple(removed),
        owners=(f"{dep.namespace}/{dep.name}", *owners),
        summary=summary,
        scores=tuple(scores),
        scheduled=scheduled,
    )


@dataclass(frozen=True, kw_only=True)
class Case:
    name: str
    deployment: Deployment
    clusters: Sequence[Cluster]
    replicas: Sequence[ModelReplica]
    result: ScheduleResult | None
    want: FleetView
    problem: str = ""


REMOVED_B0 = RemovedReplica(name=OURS_B0.name, cluster="b", index=0, reason="untolerated NoExecute taint")

CASES = [
    Case(
        name="another deployment's replica and this deployment's new one share a pool",
        deployment=DEP,
        clusters=[cluster("a", pools=[pool("h100", nodes=4)])],
        replicas=[THEIRS_A0],
        result=result(desired=1, created=[OURS_A0], scores=[score("a", 10200, spread=100)]),
        want=view(
            DEP,
            cluster_view(
                "a",
                pool_view("h100", nodes=4, chips=[chip(OURS_A0, origin=Origin.NEW), chip(THEIRS_A0)]),
                score=score("a", 10200, spread=100),
                hosts=1,
            ),
            placed=1,
            summary="1/1 clusters are available.",
            owners=["team-b/chat"],
            scores=[score("a", 10200, spread=100)],
        ),
    ),
    Case(
        name="a removed replica frees its nodes and a retained one keeps them",
        deployment=DEP,
        clusters=[cluster("a"), cluster("b", taints=[taint("drain", effect=TaintEffect.NO_EXECUTE)])],
        replicas=[OURS_B0, OURS_A0],
        result=result(desired=1, replicas=[OURS_A0], removed=[REMOVED_B0], total_clusters=2),
        want=view(
            DEP,
            cluster_view("a", pool_view("h100", chips=[chip(OURS_A0, origin=Origin.RETAINED)]), hosts=1),
            cluster_view("b", pool_view("h100"), taints=["drain:NoExecute"]),
            placed=1,
            summary="2/2 clusters are available.",
            removed=[REMOVED_B0],
        ),
    ),
    Case(
        name="a prefill-decode replica shows one chip per pool, named by the engine on it",
        deployment=PD,
        clusters=[cluster("a", pools=[pool("h200", nodes=2), pool("h100", nodes=4)])],
        replicas=[],
        result=result(desired=1, created=[PD_A0]),
        want=view(
            PD,
            cluster_view(
                "a",
                pool_view("h100", nodes=4, chips=[chip(PD_A0, origin=Origin.NEW, engines=["prefill"])]),
                pool_view("h200", nodes=2, chips=[chip(PD_A0, origin=Origin.NEW, engines=["decode"])]),
                hosts=1,
            ),
            placed=1,
            summary="1/1 clusters are available.",
        ),
    ),
    Case(
        name="a leader/worker engine holds pods times copies on its pool",
        deployment=GANG,
        clusters=[cluster("a", pools=[pool("ib", nodes=10)])],
        replicas=[],
        result=result(desired=1, created=[GANG_A0]),
        want=view(
            GANG,
            cluster_view("a", pool_view("ib", nodes=10, chips=[chip(GANG_A0, nodes=8, origin=Origin.NEW)]), hosts=1),
            placed=1,
            summary="1/1 clusters are available.",
        ),
    ),
    Case(
        name="charges to a cluster or pool the fleet does not publish are left out, as the ledger leaves them",
        deployment=SCALED_TO_ZERO,
        clusters=[cluster("a")],
        replicas=[
            observed(OTHER, cluster="gone", index=0, pools="h100"),
            observed(OTHER, cluster="a", index=0, pools="retired"),
        ],
        result=result(desired=0),
        want=view(
            SCALED_TO_ZERO, cluster_view("a", pool_view("h100")), placed=0, summary="1/1 clusters are available."
        ),
    ),
    Case(
        name="a pool already holding more than it publishes counts every replica on it",
        deployment=DEP,
        clusters=[cluster("a", pools=[pool("h100", nodes=1)])],
        replicas=[THEIRS_A1, THEIRS_A0],
        result=result(desired=1, statuses={"a": rejected("had no pool with enough free nodes", "pool h100: -1")}),
        want=view(
            DEP,
            cluster_view(
                "a",
                pool_view("h100", nodes=1, chips=[chip(THEIRS_A0), chip(THEIRS_A1)]),
                verdict=rejected("had no pool with enough free nodes", "pool h100: -1"),
            ),
            placed=0,
            summary="0/1 clusters are available: 1 had no pool with enough free nodes.",
            owners=["team-b/chat"],
        ),
    ),
    Case(
        name="rejected clusters carry their first failure, scored ones their score, and both show readiness and taints",
        deployment=deployment("llm", namespace="team-a", replicas=2),
        clusters=[
            cluster("c"),
            cluster("b", taints=[taint("spot"), taint("gpu", value="maint")]),
            cluster("a", ready=False),
        ],
        replicas=[],
        result=result(
            desired=2,
            created=[observed(DEP, cluster="c", index=0, pools="h100")],
            total_clusters=3,
            statuses={
                "a": rejected("were not Ready", "cluster is not Ready"),
                "b": rejected("had untolerated taints", "taint gpu=maint:NoSchedule", code=Code.UNRESOLVABLE),
                "c": rejected("had no pool with enough free nodes", "pool h100: 0 free nodes, engine main needs 1"),
            },
            scores=[score("c", 10200, spread=100, balance=100)],
        ),
        want=view(
            deployment("llm", namespace="team-a", replicas=2),
            cluster_view(
                "a", pool_view("h100"), ready=False, verdict=rejected("were not Ready", "cluster is not Ready")
            ),
            cluster_view(
                "b",
                pool_view("h100"),
                taints=["gpu=maint:NoSchedule", "spot:NoSchedule"],
                verdict=rejected("had untolerated taints", "taint gpu=maint:NoSchedule", code=Code.UNRESOLVABLE),
            ),
            cluster_view(
                "c",
                pool_view("h100", chips=[chip(observed(DEP, cluster="c", index=0, pools="h100"), origin=Origin.NEW)]),
                verdict=rejected("had no pool with enough free nodes", "pool h100: 0 free nodes, engine main needs 1"),
                score=score("c", 10200, spread=100, balance=100),
                hosts=1,
            ),
            placed=1,
            summary=(
                "0/3 clusters are available: 1 had no pool with enough free nodes, 1 had untolerated taints,"
                " 1 were not Ready."
            ),
            scores=[score("c", 10200, spread=100, balance=100)],
        ),
    ),
    Case(
        name="when nothing could be scheduled every observed replica is kept and the problem is the summary",
        deployment=DEP,
        clusters=[cluster("b"), cluster("a")],
        replicas=[THEIRS_A0, OURS_A0],
        result=None,
        problem="not scheduled (InvalidNodeSelector): bad selector",
        want=view(
            DEP,
            cluster_view(
                "a", pool_view("h100", chips=[chip(OURS_A0, origin=Origin.RETAINED), chip(THEIRS_A0)]), hosts=1
            ),
            cluster_view("b", pool_view("h100")),
            placed=1,
            summary="not scheduled (InvalidNodeSelector): bad selector",
            owners=["team-b/chat"],
            scheduled=False,
        ),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_build(case: Case) -> None:
    got = build(case.deployment, case.clusters, case.replicas, case.result, problem=case.problem)
    assert got == case.want


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_input_order_does_not_change_the_view(case: Case) -> None:
    forward = build(case.deployment, case.clusters, case.replicas, case.result, problem=case.problem)
    backward = build(
        case.deployment, list(reversed(case.clusters)), list(reversed(case.replicas)), case.result, problem=case.problem
    )
    assert backward == forward


def test_free_is_what_the_pool_publishes_minus_what_is_held_and_may_go_negative() -> None:
    got = [
        (p.name, p.free) for p in (pool_view("a", nodes=4), pool_view("b", nodes=1, chips=[chip(THEIRS_A0, nodes=3)]))
    ]
    assert got == [("a", 4), ("b", -2)]


def test_a_shared_pool_shows_devices_per_replica_and_the_nodes_they_fill_at_least() -> None:
    small = deployment(
        "small", namespace="team-a", replicas=3, engines=[engine(members=[member(requests=[request(count=3)])])]
    )
    fleet = [cluster("a", pools=[replace(pool("h100", nodes=2), packing=PoolPacking.DEVICES)])]
    got = build(small, fleet, [], schedule(small, fleet, []))
    assert cluster_rows(got.clusters[0]) == [
        ("a", "yes", "-", "h100", "8x gpu (shared)", "2", "2", "0", "team-a/small#0 main (new, 3 devices)"),
        ("", "", "", "", "", "", "", "", "team-a/small#1 main (new, 3 devices)"),
        ("", "", "", "", "", "", "", "", "team-a/small#2 main (new, 3 devices)"),
    ]


def test_an_exclusive_deployment_fills_a_whole_shared_node_per_pod() -> None:
    solo = deployment(
        "solo",
        namespace="team-a",
        replicas=2,
        engines=[engine(members=[member(requests=[request(count=1)])])],
        exclusive_nodes=True,
    )
    fleet = [cluster("a", pools=[replace(pool("h100", nodes=2), packing=PoolPacking.DEVICES)])]
    got = build(solo, fleet, [], schedule(solo, fleet, []))
    assert cluster_rows(got.clusters[0]) == [
        ("a", "yes", "-", "h100", "8x gpu (shared)", "2", "2", "0", "team-a/solo#0 main (new, 1 device)"),
        ("", "", "", "", "", "", "", "", "team-a/solo#1 main (new, 1 device)"),
    ]
