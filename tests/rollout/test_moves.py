"""Moves that make room for another deployment, driven over reconciles: make-before-break, within the budget.

Each round reconciles every deployment in turn on what the previous ones left; whatever a round
created is Ready by the next one (a successor that never becomes Ready is a case of its own).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime

import pytest
from modelplane.model import Cluster, Deployment, ModelReplica
from modelplane.rollout import Observed
from modelplane.rollout.reconcile import reconcile

from tests.scheduler.factories import (
    cluster,
    deployment,
    gpu_engines,
    observed,
    pool,
)

NOW = datetime(2026, 1, 1, tzinfo=UTC)


FLEET = (
    cluster("a", pools=[pool("h100", nodes=2)]),
    cluster("b", pools=[pool("a100", nodes=2, model="A100")]),
)
SMALL = deployment("small", namespace="team-b", replicas=2, engines=gpu_engines(1))
BIG = deployment("big", replicas=2, engines=gpu_engines(8, model="H100"))


def where(fleet: Sequence[ModelReplica], d: Deployment) -> list[str]:
    return sorted(f"{r.cluster}/{r.index}{'' if r.ready else ' (starting)'}" for r in fleet if r.deployment == d.name)


@dataclass(frozen=True)
class Case:
    name: str
    never_ready: frozenset[str]  # clusters where nothing new ever becomes Ready
    want: tuple[list[str], ...]  # per round: SMALL's then BIG's replicas


CASES = [
    Case(
        "both move off the H100 pool, each leaving once successors are Ready, one per reconcile",
        frozenset(),
        (
            ["a/0", "a/1", "b/0 (starting)", "b/1 (starting)"],  # moves may surge: nothing is taken down yet
            [],
            ["a/1", "b/0", "b/1"],  # the budget takes one Ready replica a reconcile
            ["a/0 (starting)"],  # the freed node goes to the blocked deployment at once
            ["b/0", "b/1"],
            ["a/0", "a/1 (starting)"],
            ["b/0", "b/1"],  # settled: nothing more moves
            ["a/0", "a/1"],
        ),
    ),
    Case(
        "successors that never become Ready never free their predecessors' nodes",
        frozenset({"b"}),
        (
            ["a/0", "a/1", "b/0 (starting)", "b/1 (starting)"],
            [],
            ["a/0", "a/1", "b/0 (starting)", "b/1 (starting)"],
            [],
            ["a/0", "a/1", "b/0 (starting)", "b/1 (starting)"],
            [],
            ["a/0", "a/1", "b/0 (starting)", "b/1 (starting)"],
            [],
        ),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_moves_are_make_before_break(case: Case) -> None:
    fleet = [observed(SMALL, cluster="a", index=i, pools="h100") for i in range(2)]
    rounds: list[list[str]] = []
    for _ in range(len(case.want) // 2):
        fleet = [replace(r, ready=r.ready or r.cluster not in case.never_ready) for r in fleet]
        for d in (SMALL, BIG):
            before = {r.name: r for r in fleet}
            done = reconcile(d, FLEET, fleet, observed=Observed(), now=NOW, deployments=[SMALL, BIG])
            mine = [replace(r, ready=before[r.name].ready if r.name in before else False) for r in done.replicas]
            fleet = [r for r in fleet if r.deployment != d.name] + mine
            # never fewer Ready than spec.replicas - maxUnavailable (1 by default) while it moves
            assert sum(r.ready for r in mine) >= min(
                d.replicas - 1, sum(r.ready for r in before.values() if r.deployment == d.name)
            )
            rounds.append(where(fleet, d))
    assert tuple(rounds) == case.want


@dataclass(frozen=True)
class Withdrawn:
    name: str
    fleet: tuple[Cluster, ...]
    small: Deployment
    on: str  # the cluster SMALL's replicas start on, Ready, in its H100 pool: the only fit of BIG
    want: tuple[list[str], ...]  # SMALL's replicas after each reconcile


H100_LAST = (cluster("a", pools=[pool("a100", nodes=2, model="A100")]), cluster("b", pools=[pool("h100", nodes=1)]))
WITHDRAWN = [
    Withdrawn(
        "demand withdrawn before one successor is Ready: the successor goes, the Ready replica stays",
        H100_LAST,
        replace(SMALL, replicas=1),
        "b",
        (["a/0 (starting)", "b/0"], ["b/0"], ["b/0"]),
    ),
    Withdrawn(
        "demand withdrawn before two successors are Ready: both go, though their cluster hosts as many",
        FLEET,
        SMALL,
        "a",
        (["a/0", "a/1", "b/0 (starting)", "b/1 (starting)"], ["a/0", "a/1"], ["a/0", "a/1"]),
    ),
]


@pytest.mark.parametrize("case", WITHDRAWN, ids=lambda c: c.name)
def test_withdrawn_demand_never_takes_down_a_ready_replica(case: Withdrawn) -> None:
    fleet = [observed(case.small, cluster=case.on, index=i, pools="h100") for i in range(case.small.replicas)]
    rounds: list[list[str]] = []
    # The first reconcile moves SMALL for BIG; BIG then asks for nothing while the successors start.
    for big in (BIG, replace(BIG, replicas=0), replace(BIG, replicas=0)):
        before = {r.name: r for r in fleet}
        done = reconcile(case.small, case.fleet, fleet, observed=Observed(), now=NOW, deployments=[case.small, big])
        fleet = [replace(r, ready=before[r.name].ready if r.name in before else False) for r in done.replicas]
        rounds.append(where(fleet, case.small))
    assert tuple(rounds) == case.want
