"""What a plan leaves on the table: GPUs claimed and stranded, and the replicas that block unplaced demand."""

from __future__ import annotations

from dataclasses import replace

import pytest
from modelplane.fleet import Blocker, ClusterView, Gpus, blockers, gpus
from modelplane.model import PoolPacking

from tests.fleet.factories import chip, pool_view
from tests.scheduler.factories import cluster, deployment, engine, is_model, member, observed, pool, request

OTHER = deployment("chat", namespace="team-b")
SMALL = deployment("small", namespace="team-b", engines=[engine(members=[member(requests=[request(count=1)])])])


def _cluster(*pools) -> ClusterView:
    return ClusterView(name="a", ready=True, taints=(), pools=tuple(pools), verdict=None, score=None)


@pytest.mark.parametrize(
    ("clusters", "want"),
    [
        pytest.param([_cluster(pool_view("h100", nodes=4))], Gpus(fleet=32, placed=0, held=0), id="nothing placed"),
        pytest.param(
            [
                _cluster(
                    pool_view(
                        "h100", nodes=4, chips=[chip(observed(SMALL, cluster="a", index=0, pools="h100"), devices=1)]
                    )
                )
            ],
            Gpus(fleet=32, placed=1, held=8),
            id="a 1-GPU pod on a whole node strands the other seven",
        ),
        pytest.param(
            [
                _cluster(
                    replace(
                        pool_view(
                            "h100",
                            nodes=4,
                            chips=[
                                chip(observed(SMALL, cluster="a", index=i, pools="h100"), devices=3) for i in range(3)
                            ],
                        ),
                        shared=True,
                    )
                )
            ],
            Gpus(fleet=32, placed=9, held=16),
            id="on a shared pool pods fill nodes at the least by their devices",
        ),
    ],
)
def test_gpus(clusters: list[ClusterView], want: Gpus) -> None:
    assert gpus(clusters) == want


def test_the_replicas_holding_the_pools_a_deployment_could_use_block_it() -> None:
    h200 = deployment(
        "big", namespace="team-a", engines=[engine(members=[member(requests=[request(selectors=[is_model("H200")])])])]
    )
    fleet = [
        cluster("a", pools=[pool("h100", nodes=1), pool("h200", nodes=1, model="H200")]),
        cluster("b", pools=[replace(pool("h200", nodes=2, model="H200"), packing=PoolPacking.DEVICES)]),
    ]
    replicas = [
        observed(OTHER, cluster="a", index=0, pools="h100"),  # on a pool the deployment cannot use
        observed(OTHER, cluster="a", index=1, pools="h200"),
        observed(SMALL, cluster="b", index=0, pools="h200"),
        observed(h200, cluster="b", index=0, pools="h200"),  # its own replica blocks nothing
    ]
    assert blockers(h200, fleet, replicas) == (
        Blocker(cluster="a", pool="h200", holder="team-b/chat#1", nodes=1, shared=False),
        Blocker(cluster="b", pool="h200", holder="team-b/small#0", nodes=1, shared=True),
    )
    assert [b.text() for b in blockers(h200, fleet, replicas)] == [
        "team-b/chat#1 on a/h200 (1 node)",
        "team-b/small#0 on b/h200 (1 device)",
    ]


def test_an_exclusive_replica_blocks_the_whole_shared_nodes_it_holds() -> None:
    solo = replace(SMALL, name="solo", exclusive_nodes=True)
    fleet = [cluster("b", pools=[replace(pool("h100", nodes=2), packing=PoolPacking.DEVICES)])]
    replicas = [observed(SMALL, cluster="b", index=0, pools="h100"), observed(solo, cluster="b", index=0, pools="h100")]
    assert [b.text() for b in blockers(deployment("big"), fleet, replicas)] == [
        "team-b/small#0 on b/h100 (1 device)",
        "team-b/solo#0 on b/h100 (8 devices)",
    ]
