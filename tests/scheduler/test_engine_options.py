"""Engine options are shared between pools of one name and content: only where they cannot differ."""

from __future__ import annotations

from dataclasses import dataclass, replace

import pytest
from modelplane.devices import DeviceMatcher
from modelplane.model import Cluster, NodePool, PoolPacking
from modelplane.scheduler.engines import ClusterOptions, EngineOptions

from tests.scheduler.factories import cluster, deployment, gpu_engines, pool


def _nodes(name: str = "gpu") -> NodePool:
    return pool(name, nodes=2, gpus=8)


def _shared(name: str = "gpu") -> NodePool:
    return replace(pool(name, nodes=2, gpus=8), packing=PoolPacking.DEVICES)


@dataclass(frozen=True)
class Case:
    name: str
    seen_first: tuple[Cluster, ...]  # clusters whose options are worked out before the target's
    target: Cluster


CASES = (
    Case(
        name="a shared pool after a whole-node pool of the same name and devices",
        seen_first=(cluster("a", pools=[_nodes()]),),
        target=cluster("b", pools=[_shared()]),
    ),
    Case(
        name="a whole-node pool after a shared pool of the same name and devices",
        seen_first=(cluster("a", pools=[_shared()]),),
        target=cluster("b", pools=[_nodes()]),
    ),
    Case(
        name="a pool after an identical pool of another cluster",
        seen_first=(cluster("a", pools=[_shared(), _nodes("other")]),),
        target=cluster("b", pools=[_shared(), _nodes("other")]),
    ),
)


def _alone(target: Cluster) -> ClusterOptions:
    dep = deployment(engines=gpu_engines(1))
    return EngineOptions(dep, DeviceMatcher()).of(target)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_options_do_not_depend_on_the_clusters_seen_before(case: Case) -> None:
    dep = deployment(engines=gpu_engines(1))
    options = EngineOptions(dep, DeviceMatcher())
    for seen in case.seen_first:
        options.of(seen)
    assert options.of(case.target) == _alone(case.target)
