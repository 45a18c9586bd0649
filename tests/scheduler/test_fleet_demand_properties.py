"""Held room and moves over whole fleets: every reconcile of every deployment keeps the guarantees.

The placement-quality scenarios (tests/benchmarks/scenarios.py), whole or a third of their demand, are driven as a control plane
drives them: deployments arrive in a random order, seeing either every deployment or only those
that arrived before them, then all keep reconciling while what they created becomes Ready, until
nothing changes. After every single reconcile: no pool holds more nodes than it has (replicas
leaving make-before-break included), no deployment has fewer Ready replicas than its disruption
budget allows, and no two replicas share an identity.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st
from modelplane.model import Deployment, ModelReplica
from modelplane.rollout import resolve_budget

from tests.benchmarks.quality import run_plan
from tests.benchmarks.scenarios import generate


@settings(max_examples=8, deadline=None)
@given(
    seed=st.integers(0, 10_000), order_seed=st.integers(0, 10_000), foresee=st.booleans(), part=st.sampled_from((1, 3))
)
def test_every_reconcile_keeps_the_guarantees(seed: int, order_seed: int, foresee: bool, part: int) -> None:
    scenario = generate(seed, "small")
    # A third of the demand leaves room for moves (the full mix fills the fleet: nothing can move).
    scenario = replace(scenario, demand=scenario.demand[: max(2, len(scenario.demand) // part)])
    order = list(range(len(scenario.demand)))
    random.Random(order_seed).shuffle(order)
    nodes = {(c.name, p.name): p.nodes for c in scenario.clusters for p in c.pools}

    def check(
        deployment: Deployment,
        before: Sequence[ModelReplica],
        after: Sequence[ModelReplica],
        fleet: Sequence[ModelReplica],
    ) -> None:
        used: Counter[tuple[str, str]] = Counter()
        for r in fleet:
            for pool, n in r.node_cost_by_pool().items():
                used[(r.cluster, pool)] += n
        over = {k: (n, nodes[k]) for k, n in used.items() if n > nodes[k]}
        budget = resolve_budget(deployment.rollout, deployment.replicas)
        floor = min(sum(r.ready for r in before), deployment.replicas - budget.unavailable)
        identities = Counter((r.cluster, r.index) for r in after)
        assert (over, sum(r.ready for r in after) >= floor, max(identities.values(), default=1)) == ({}, True, 1)

    run_plan(scenario, order, foresee=foresee, check=check)
