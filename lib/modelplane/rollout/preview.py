"""A rollout previewed round by round: which replicas change in which reconcile, and what stays up.

Drives `wanted_new` and `step` (the rules each reconcile applies) from an observed fleet,
assuming every replica created or updated becomes Ready by the next round and that the fleet has
room for the surge. Round 1 sees readiness as observed. Above spec.replicas, old replicas leave
first, in the scheduler's scale-down order (the cluster holding most of the deployment's
replicas, ties to the name that sorts last, then the highest index), as make-before-break moves.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace

from modelplane.rollout.budget import Budget
from modelplane.rollout.step import Fate, Replica, step, wanted_new

MAX_ROUNDS = 100  # a rollout that changes something every round ends long before this


@dataclass(frozen=True, slots=True, kw_only=True)
class Member:
    """An existing replica of the deployment, as observed."""

    name: str
    cluster: str
    index: int
    current: bool  # renders the deployment's revision
    ready: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class Round:
    number: int
    created: int  # new-revision replicas placed
    updated: tuple[str, ...]  # old replicas updated in place (down until the next round)
    removed: tuple[str, ...]
    available: int  # Ready replicas left serving through this round
    total: int  # replicas after the round
    current: int  # replicas at the revision after the round


@dataclass(frozen=True, slots=True, kw_only=True)
class Preview:
    rounds: tuple[Round, ...]
    complete: bool  # every replica runs the revision, Ready, at the end


def _leaving(fleet: Sequence[Member], replicas: int) -> set[str]:
    """The replicas the scheduler's scale-down takes above `replicas`: old ones first."""
    staying = list(fleet)
    per_cluster = Counter(m.cluster for m in staying)
    out: set[str] = set()
    while len(staying) > max(replicas, 0):
        candidates = [m for m in staying if not m.current] or staying
        victim = max(candidates, key=lambda m: (per_cluster[m.cluster], m.cluster, m.index, m.name))
        staying.remove(victim)
        out.add(victim.name)
        per_cluster[victim.cluster] -= 1
    return out


def _fate(m: Member, leaving: set[str]) -> Fate:
    if m.name not in leaving:
        return Fate.KEEP
    return Fate.SCALE_DOWN if m.current else Fate.MOVE


def _complete(fleet: Sequence[Member], replicas: int) -> bool:
    return len(fleet) == replicas and all(m.current and m.ready for m in fleet)


def preview(*, replicas: int, budget: Budget, paused: bool, fleet: Sequence[Member]) -> Preview:
    """The rounds that take `fleet` to the deployment's revision, one reconcile each."""
    members = sorted(fleet, key=lambda m: m.name)
    rounds: list[Round] = []
    while not _complete(members, replicas) and len(rounds) < MAX_ROUNDS:
        leaving = _leaving(members, replicas)
        stepped = [Replica(name=m.name, current=m.current, ready=m.ready, fate=_fate(m, leaving)) for m in members]
        placed = wanted_new(replicas=replicas, budget=budget, frozen=paused, fleet=stepped)
        decided = step(replicas=replicas, budget=budget, frozen=paused, fleet=stepped, placed=placed)
        if placed == 0 and not decided.update and not decided.remove:
            break  # nothing moves: paused, or the budget allows no step
        available = sum(m.ready and m.name not in decided.update and m.name not in decided.remove for m in members)
        kept = [m for m in members if m.name not in decided.remove]
        new = [
            Member(name=f"new-{len(rounds) + 1}.{k + 1}", cluster="", index=k, current=True, ready=True)
            for k in range(placed)
        ]
        # by the next round, whatever this one created or updated is Ready
        members = [replace(m, current=m.current or m.name in decided.update, ready=True) for m in kept] + new
        rounds.append(
            Round(
                number=len(rounds) + 1,
                created=placed,
                updated=tuple(sorted(decided.update)),
                removed=tuple(sorted(decided.remove)),
                available=available,
                total=len(members),
                current=sum(m.current for m in members),
            )
        )
    return Preview(rounds=tuple(rounds), complete=_complete(members, replicas))
