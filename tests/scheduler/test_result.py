"""Whole ScheduleResults: complete ModelReplicas, explained scores, and order independence."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import TypeVar

import pytest
from modelplane.model import (
    Cluster,
    Deployment,
    DeviceGroup,
    ModelReplica,
    PlacedEngine,
    PlacedMember,
    PoolCharge,
    ResolvedDeviceRequest,
    Role,
    TaintEffect,
)
from modelplane.names import replica_name
from modelplane.scheduler import ClusterScore, Diagnosis, RemovedReplica, ScheduleResult, schedule
from modelplane.scheduler.result import FIT
from modelplane.stated import StatedDemand, StatedEngine, StatedOption, pool_kind

from tests.scheduler.factories import (
    GPU_DRIVER,
    IS_GPU,
    IS_NIC,
    cluster,
    deployment,
    engine,
    gpu,
    leader_worker,
    member,
    nic,
    observed,
    pool,
    request,
    taint,
)


@dataclass(frozen=True, kw_only=True)
class Case:
    name: str
    deployment: Deployment
    clusters: Sequence[Cluster]
    replicas: Sequence[ModelReplica] = ()
    want: ScheduleResult


GANG = deployment(
    replicas=1,
    queue=None,
    priority_class_name="inference",
    template_labels={"team": "search"},
    engines=[
        engine(
            members=[
                member(role=Role.LEADER, requests=()),
                member(
                    role=Role.WORKER, worker_nodes=2, requests=[request(), request("ib", count=1, selectors=[IS_NIC])]
                ),
            ]
        )
    ],
)
TEMPLATE = GANG.engines[0].members[0].template
GPU_REQUEST = ResolvedDeviceRequest(name="gpu", device_class_name=GPU_DRIVER, count=8, selectors=(IS_GPU,))


def gang_replica(*, name: str, cluster_name: str, index: int, ready: bool, queue: str, labels: dict[str, str]):
    return ModelReplica(
        namespace="team-a",
        name=name,
        deployment="llm",
        cluster=cluster_name,
        index=index,
        engines=(
            PlacedEngine(
                name="main",
                members=(
                    PlacedMember(role=Role.LEADER, pool="ib", template=TEMPLATE),
                    PlacedMember(
                        role=Role.WORKER, worker_nodes=2, pool="ib", device_requests=(GPU_REQUEST,), template=TEMPLATE
                    ),
                ),
            ),
        ),
        provider_config_name=f"pc-{cluster_name}",
        workload_namespace=f"ws-{cluster_name}",
        model=GANG.model,
        queue=queue,
        priority_class_name="inference",
        topology="rack",
        labels=MappingProxyType(labels),
        ready=ready,
    )


IB_CLUSTER = cluster("a", pools=[pool("ib", nodes=2, devices=[gpu(), nic()])], default_queue="kai-a", topology="rack")


def _scores(*, spread: int, free: int, idle: int = 0, premium: int = 0) -> MappingProxyType[str, int]:
    return MappingProxyType({"spread": spread, "idle": idle, "premium": premium, "free": free})


def _stated(
    *,
    replicas: int,
    devices: int,
    clusters: tuple[str, ...],
    options: tuple[StatedOption, ...],
    all_but: bool = False,
    priority_class: str = "",
) -> StatedDemand:
    """What deployment llm of team-a states with one engine, main."""
    return StatedDemand(
        namespace="team-a",
        name="llm",
        replicas=replicas,
        devices=devices,
        clusters=clusters,
        all_but=all_but,
        engines=(StatedEngine(name="main", options=options),),
        priority_class=priority_class,
    )


CASES = [
    Case(
        name="a new replica carries the spec, the cluster's coordinates and only its DRA requests",
        deployment=GANG,
        clusters=[IB_CLUSTER],
        want=ScheduleResult(
            replicas=(
                gang_replica(
                    name=replica_name("llm", "a", 0),
                    cluster_name="a",
                    index=0,
                    ready=False,
                    queue="kai-a",
                    labels={"team": "search"},
                ),
            ),
            created=frozenset({replica_name("llm", "a", 0)}),
            removed=(),
            statement=_stated(
                priority_class="inference",  # GANG names it
                replicas=1,
                devices=18,
                clusters=(),  # every cluster but none
                all_but=True,
                options=(
                    StatedOption(
                        kind=pool_kind(IB_CLUSTER.pools[0]),
                        cost=2,
                        charge=PoolCharge(nodes=2, groups=(DeviceGroup(pods=2, devices=8),)),
                        claimed=16,
                    ),
                ),
            ),
            diagnosis=Diagnosis(
                desired=1,
                placed=1,
                total_clusters=1,
                statuses=MappingProxyType({"a": FIT}),
                scores=(ClusterScore(cluster="a", total=10000, scores=_scores(spread=100, free=0)),),
            ),
        ),
    ),
    Case(
        name="a kept replica keeps its name, index and readiness but takes the current spec",
        deployment=replace(GANG, queue="fast", template_labels=MappingProxyType({"team": "ads"})),
        clusters=[IB_CLUSTER],
        replicas=[observed(GANG, cluster="a", index=4, pools="ib", name="legacy-name")],
        want=ScheduleResult(
            replicas=(
                gang_replica(
                    name="legacy-name", cluster_name="a", index=4, ready=True, queue="fast", labels={"team": "ads"}
                ),
            ),
            created=frozenset(),
            removed=(),
            # the queue it asks for is not one the cluster lets it use: it states no pool there
            statement=_stated(replicas=1, devices=18, clusters=(), options=(), priority_class="inference"),
            diagnosis=Diagnosis(desired=1, placed=1, total_clusters=1, evaluated=False),
        ),
    ),
    Case(
        name="scores weigh spread against idle devices, then best fit, and explain each cluster",
        deployment=deployment(replicas=2),
        clusters=[
            cluster("a", pools=[pool("h100", nodes=8)]),
            cluster("b", pools=[pool("h100", nodes=2)]),
            cluster("c", pools=[pool("h100", nodes=4)]),
        ],
        replicas=[observed(deployment(), cluster="a", index=0, pools="h100")],
        want=ScheduleResult(
            replicas=(
                observed(deployment(), cluster="a", index=0, pools="h100"),
                replace(observed(deployment(), cluster="b", index=0, pools="h100"), ready=False),
            ),
            created=frozenset({replica_name("llm", "b", 0)}),
            removed=(),
            statement=_stated(
                replicas=2,
                devices=8,
                clusters=(),  # every cluster but none
                all_but=True,
                options=(
                    StatedOption(
                        kind=pool_kind(pool("h100", nodes=8)),
                        cost=1,
                        charge=PoolCharge(nodes=1, groups=(DeviceGroup(pods=1, devices=8),)),
                        claimed=8,
                    ),
                ),
            ),
            diagnosis=Diagnosis(
                desired=2,
                placed=2,
                total_clusters=3,
                statuses=MappingProxyType({"a": FIT, "b": FIT, "c": FIT}),
                scores=(
                    ClusterScore(cluster="b", total=10000, scores=_scores(spread=100, free=1)),
                    ClusterScore(cluster="c", total=10000, scores=_scores(spread=100, free=3)),
                    ClusterScore(cluster="a", total=9992, scores=_scores(spread=99, free=6)),
                ),
            ),
        ),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_schedule_result(case: Case) -> None:
    assert schedule(case.deployment, case.clusters, case.replicas) == case.want


T = TypeVar("T")


def _shuffled(rng: random.Random, items: Sequence[T]) -> list[T]:
    out = list(items)
    rng.shuffle(out)
    return out


def test_shuffled_inputs_give_identical_results() -> None:
    dep = deployment(replicas=5, engines=[leader_worker(workers=1), engine("side", copies=2)])
    other = deployment("other", engines=[leader_worker(workers=2)])
    clusters = [
        cluster(name, pools=[pool(p, nodes=n) for p, n in pools], taints=taints)
        for name, pools, taints in [
            ("a", [("x", 4), ("y", 3)], ()),
            ("b", [("x", 2), ("y", 2), ("z", 5)], ()),
            ("c", [("x", 6)], (taint("drain", effect=TaintEffect.NO_EXECUTE),)),
            ("d", [("y", 3), ("x", 3)], ()),
        ]
    ]
    replicas = [
        observed(dep, cluster="a", index=0, pools={"main": "x", "side": "y"}),
        observed(dep, cluster="c", index=0, pools={"main": "x", "side": "x"}),
        observed(other, cluster="d", index=0, pools="x"),
        observed(other, cluster="b", index=0, pools="z"),
    ]
    want = schedule(dep, clusters, replicas)
    assert want.removed == (
        RemovedReplica(name=replica_name("llm", "c", 0), cluster="c", index=0, reason="untolerated NoExecute taint"),
    )
    rng = random.Random(7)
    for _ in range(20):
        shuffled_clusters = [replace(c, pools=tuple(_shuffled(rng, c.pools))) for c in _shuffled(rng, clusters)]
        got = schedule(dep, shuffled_clusters, _shuffled(rng, replicas))
        assert repr(got) == repr(want)
