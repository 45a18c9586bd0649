"""The placement-quality benchmark's yardsticks: exact optima on fleets small enough to count by hand,
and the scheduler never beating them on generated fleets (a plan above the optimum would mean the
optimum model misses a placement the project allows)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from modelplane import api

from tests.benchmarks.optimum import Optimum, solve
from tests.benchmarks.quality import measure_fleet, run_plan
from tests.benchmarks.scenarios import GPUS, Gpu, Scenario, cluster_object, generate, make_demand

H100, A100_80, A100_40, L4 = GPUS


@dataclass(frozen=True)
class Case:
    name: str
    pools: tuple[tuple[str, tuple[tuple[Gpu, int, bool], ...]], ...]  # per cluster
    demand: tuple[tuple[str, int], ...]  # (shape, replicas)
    whole: int
    devices: int


CASES = (
    # Two 8-GPU nodes: whole nodes fit one TP4 and one TP1 replica; devices fit the TP4 and all four TP1s.
    Case(name="small pods share nodes", pools=(("a", ((H100, 2, False),)),), demand=(("tp4", 1), ("tp1", 4)),
         whole=5, devices=8),
    # Two TP8 replicas beat any number of TP1 replicas on two nodes, in both models.
    Case(name="whole nodes to the largest", pools=(("a", ((H100, 2, False),)),), demand=(("tp1", 4), ("tp8", 2)),
         whole=16, devices=16),
    # The gang needs InfiniBand and two nodes of one pool: only cluster b's pool has both.
    Case(name="gang needs one pool", pools=(("a", ((H100, 1, True), (A100_80, 1, True))), ("b", ((A100_80, 2, True),))),
         demand=(("ib-gang", 2),), whole=16, devices=16),
    # 4x L4 on one L4 node; TP2 of 40Gi cannot use L4 (24Gi): one A100-40 node holds four of them as devices.
    Case(name="selectors bound the pools", pools=(("a", ((L4, 1, False), (A100_40, 1, False))),),
         demand=(("l4x4", 2), ("tp2", 4)), whole=6, devices=12),
    # Prefill (2 copies of TP2) and decode (TP4 >= 80Gi) of one replica on one cluster, different pools allowed.
    Case(name="prefill and decode", pools=(("a", ((A100_40, 2, False), (H100, 1, False))), ("b", ((H100, 1, False),))),
         demand=(("prefill-decode", 2),), whole=8, devices=16),
)  # fmt: skip


def _scenario(case: Case) -> Scenario:
    clusters = tuple(api.parse_cluster(cluster_object(name, pools)) for name, pools in case.pools)
    demand = tuple(make_demand(shape, f"d{i}", "team", n) for i, (shape, n) in enumerate(case.demand))
    return Scenario(seed=0, size="hand", clusters=clusters, demand=demand)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_optimum_of_hand_counted_fleets(case: Case) -> None:
    scenario = _scenario(case)
    got = (solve(scenario, devices=False), solve(scenario, devices=True))
    assert got == (Optimum(gpus=case.whole, gap=0.0), Optimum(gpus=case.devices, gap=0.0))


@pytest.mark.parametrize(("size", "seed"), [("small", 0), ("medium", 0)])
def test_the_plan_never_beats_the_optimum(size: str, seed: int) -> None:
    fleet = measure_fleet(generate(seed, size), order_count=2, time_limit=20.0)
    placed = [p.gpus for p in fleet.plans]
    assert (fleet.whole.gap, fleet.limit.gap) == (0.0, 0.0)
    assert max(placed) <= fleet.whole.gpus <= fleet.limit.gpus


def test_moves_are_counted_once_per_ready_replica_that_leaves() -> None:
    """One H100 node and one A100 80GB node; one GPU arrives first and takes the H100 (nothing states the
    Hopper-only TP8 yet); the TP8 arrives, and the one-GPU replica moves to the A100 to make room."""
    scenario = _scenario(
        Case(name="", pools=(("a", ((H100, 1, False),)), ("b", ((A100_80, 1, False),))),
             demand=(("tp1", 1), ("hopper-tp8", 1)), whole=9, devices=9)
    )  # fmt: skip
    plans = (run_plan(scenario, [0, 1], foresee=False), run_plan(scenario, [0, 1], foresee=False, settle=False))
    assert [(p.gpus, p.moves, p.most_moves) for p in plans] == [(9, 1, 1), (1, 0, 0)]
