"""Moves that make room for another deployment, driven over reconciles: make-before-break, within the budget.

Each round reconciles every deployment in turn on what the previous ones left; whatever a round
created is Ready by the next one (a successor that never becomes Ready is a case of its own).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime

import pytest
from modelplane.model import Cluster, Deployment, ModelReplica, Role, RolloutStrategy
from modelplane.rollout import Observed, resolve_budget
from modelplane.rollout.reconcile import reconcile
from modelplane.scheduler.state import statements

from tests.scheduler.factories import (
    IS_GPU,
    cluster,
    deployment,
    engine,
    gpu_engines,
    is_model,
    member,
    observed,
    pool,
    request,
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
        "both move off the H100 pool, one successor at a time (maxSurge 1), each leaving once it is Ready",
        frozenset(),
        (
            ["a/0", "a/1", "b/0 (starting)"],  # the successor takes the surge slot: nothing is taken down yet
            [],
            ["a/1", "b/0"],  # the budget takes one Ready replica a reconcile
            ["a/0 (starting)"],  # the freed node goes to the blocked deployment at once
            ["a/1", "b/0", "b/1 (starting)"],  # the slot is free again
            ["a/0"],
            ["b/0", "b/1"],  # settled: nothing more moves
            ["a/0", "a/1 (starting)"],
        ),
    ),
    Case(
        "a successor that never becomes Ready never frees its predecessor's node, nor lets another move",
        frozenset({"b"}),
        (
            ["a/0", "a/1", "b/0 (starting)"],
            [],
            ["a/0", "a/1", "b/0 (starting)"],
            [],
            ["a/0", "a/1", "b/0 (starting)"],
            [],
            ["a/0", "a/1", "b/0 (starting)"],
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
            done = reconcile(d, FLEET, fleet, observed=Observed(), now=NOW, demands=statements([SMALL, BIG], FLEET))
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
        "demand withdrawn before a successor is Ready: it goes, though the Ready replicas' cluster hosts more",
        FLEET,
        SMALL,
        "a",
        (["a/0", "a/1", "b/0 (starting)"], ["a/0", "a/1"], ["a/0", "a/1"]),
    ),
]


@pytest.mark.parametrize("case", WITHDRAWN, ids=lambda c: c.name)
def test_withdrawn_demand_never_takes_down_a_ready_replica(case: Withdrawn) -> None:
    fleet = [observed(case.small, cluster=case.on, index=i, pools="h100") for i in range(case.small.replicas)]
    rounds: list[list[str]] = []
    # The first reconcile moves SMALL for BIG; BIG then asks for nothing while the successors start.
    for big in (BIG, replace(BIG, replicas=0), replace(BIG, replicas=0)):
        before = {r.name: r for r in fleet}
        done = reconcile(
            case.small,
            case.fleet,
            fleet,
            observed=Observed(),
            now=NOW,
            demands=statements([case.small, big], case.fleet),
        )
        fleet = [replace(r, ready=before[r.name].ready if r.name in before else False) for r in done.replicas]
        rounds.append(where(fleet, case.small))
    assert tuple(rounds) == case.want


# MOVER's four 8-GPU replicas hold every H100 node; HUGE wants sixteen H100 nodes; b has room for MOVER.
ROOMY = (cluster("a", pools=[pool("h100", nodes=4)]), cluster("b", pools=[pool("a100", nodes=8, model="A100")]))
MOVER = deployment("mover", namespace="team-b", replicas=4, engines=gpu_engines(8))
HUGE = deployment("huge", replicas=16, engines=gpu_engines(8, model="H100"))


@dataclass(frozen=True)
class Budgeted:
    name: str
    strategy: RolloutStrategy
    want: tuple[str, ...]  # MOVER after each round; "said to move": its replicas in the MakingRoom event


BUDGETED = [
    Budgeted(
        "maxSurge 1: one successor at a time, one replica leaving a reconcile",
        RolloutStrategy(max_surge=1, max_unavailable=1),
        (
            "4 on a, 1 on b, 1 starting, 1 said to move",
            "3 on a, 1 on b, 0 starting, 1 said to move",  # the one leaving now
            "3 on a, 2 on b, 1 starting, 1 said to move",
            "2 on a, 2 on b, 0 starting, 1 said to move",
            "2 on a, 3 on b, 1 starting, 1 said to move",
            "1 on a, 3 on b, 0 starting, 1 said to move",
            "1 on a, 4 on b, 1 starting, 1 said to move",
            "0 on a, 4 on b, 0 starting, 1 said to move",
            "0 on a, 4 on b, 0 starting, 0 said to move",
        ),
    ),
    Budgeted(
        "maxSurge 2, maxUnavailable 1: two successors at a time, still one replica leaving a reconcile",
        RolloutStrategy(max_surge=2, max_unavailable=1),
        (
            "4 on a, 2 on b, 2 starting, 2 said to move",
            "3 on a, 2 on b, 0 starting, 2 said to move",  # one leaving, one covered by the other successor
            "2 on a, 3 on b, 1 starting, 2 said to move",
            "1 on a, 4 on b, 1 starting, 2 said to move",
            "0 on a, 4 on b, 0 starting, 1 said to move",
        ),
    ),
    Budgeted(
        "maxSurge 2, maxUnavailable 2: two at a time both ways",
        RolloutStrategy(max_surge=2, max_unavailable=2),
        (
            "4 on a, 2 on b, 2 starting, 2 said to move",
            "2 on a, 2 on b, 0 starting, 2 said to move",
            "2 on a, 4 on b, 2 starting, 2 said to move",
            "0 on a, 4 on b, 0 starting, 2 said to move",
        ),
    ),
    Budgeted(
        "maxSurge 0: no successor ever fits the budget, so nothing moves and nothing is said to",
        RolloutStrategy(max_surge=0, max_unavailable=1),
        ("4 on a, 0 on b, 0 starting, 0 said to move",) * 3,
    ),
]


@pytest.mark.parametrize("case", BUDGETED, ids=lambda c: c.name)
def test_moves_stay_within_the_movers_budget(case: Budgeted) -> None:
    mover = replace(MOVER, rollout=case.strategy)
    budget = resolve_budget(case.strategy, mover.replicas)
    fleet = [observed(mover, cluster="a", index=i, pools="h100") for i in range(mover.replicas)]
    rounds: list[str] = []
    for _ in case.want:
        fleet = [replace(r, ready=True) for r in fleet]
        moving = 0
        for d in (mover, HUGE):
            before = {r.name: r for r in fleet}
            done = reconcile(d, ROOMY, fleet, observed=Observed(), now=NOW, demands=statements([mover, HUGE], ROOMY))
            mine = [replace(r, ready=before[r.name].ready if r.name in before else False) for r in done.replicas]
            fleet = [r for r in fleet if r.deployment != d.name] + mine
            if d is mover:
                moving = sum(m.replica.deployment == mover.name for m in done.schedule.moves)
                # the mover stays whole: N Ready throughout, never more than N + maxSurge in all
                assert sum(r.ready for r in mine) >= mover.replicas
                assert len(mine) <= mover.replicas + budget.surge
        on = [r for r in fleet if r.deployment == mover.name]
        rounds.append(
            f"{sum(r.cluster == 'a' for r in on)} on a, {sum(r.cluster == 'b' for r in on)} on b, "
            f"{sum(not r.ready for r in on)} starting, {moving} said to move"
        )
    assert tuple(rounds) == case.want


@pytest.mark.parametrize(
    ("strategy", "movable"),
    [
        (RolloutStrategy(max_surge=1, max_unavailable=1), True),
        (RolloutStrategy(max_surge="25%", max_unavailable=0), True),
        (RolloutStrategy(max_surge=0, max_unavailable=1), False),
    ],
    ids=["maxSurge 1", "maxSurge 25% of 4", "maxSurge 0"],
)
def test_a_deployment_without_surge_states_itself_not_movable(strategy: RolloutStrategy, movable: bool) -> None:
    """Blocked demand must not wait on a move its holder's budget never allows."""
    mover = replace(MOVER, rollout=strategy)
    fleet = [observed(mover, cluster="a", index=i, pools="h100") for i in range(mover.replicas)]
    done = reconcile(mover, ROOMY, fleet, observed=Observed(), now=NOW, demands=())
    assert done.schedule.statement is not None
    assert done.schedule.statement.movable is movable


# Four nodes: two H100 (the only fit of a Hopper-only two-node gang), two A100. A one-GPU replica
# on an H100 node leaves for an A100 one, and the gang takes both H100 nodes.
FOUR_NODES = (cluster("a", pools=[pool("h100", nodes=2)]), cluster("b", pools=[pool("a100", nodes=2, model="A100")]))
_HOPPER = [request(count=8, selectors=(IS_GPU, is_model("H100")))]
HOPPER_GANG = deployment(
    "gang",
    engines=[
        engine(
            members=[
                member(role=Role.LEADER, requests=_HOPPER),
                member(role=Role.WORKER, worker_nodes=1, requests=_HOPPER),
            ]
        )
    ],
)


def test_a_move_completes_and_the_blocked_gang_takes_the_room() -> None:
    small = replace(SMALL, replicas=1)
    everyone = [small, HOPPER_GANG]
    fleet = [observed(small, cluster="a", index=0, pools="h100")]
    rounds: list[tuple[list[str], list[str]]] = []
    for _ in range(4):
        fleet = [replace(r, ready=True) for r in fleet]
        for d in everyone:
            before = {r.name: r for r in fleet}
            done = reconcile(
                d, FOUR_NODES, fleet, observed=Observed(), now=NOW, demands=statements(everyone, FOUR_NODES)
            )
            mine = [replace(r, ready=before[r.name].ready if r.name in before else False) for r in done.replicas]
            fleet = [r for r in fleet if r.deployment != d.name] + mine
        rounds.append((where(fleet, small), where(fleet, HOPPER_GANG)))
    assert rounds == [
        (["a/0", "b/0 (starting)"], []),  # the successor takes an A100 node, not the free H100 one
        (["b/0"], ["a/0 (starting)"]),  # once it is Ready the old replica goes, and the gang takes both H100 nodes
        (["b/0"], ["a/0"]),
        (["b/0"], ["a/0"]),  # settled
    ]
