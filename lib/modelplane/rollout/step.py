"""One reconcile of a rollout: which replicas to create, update in place, and remove.

A pure function of counts and observed readiness, in two halves around the scheduler:
`wanted_new` says how many new-revision replicas to place, `step` then decides, given how many
were placed, what happens to the replicas that already exist. The rules, with N = spec.replicas:

- A replica whose cluster is gone or refuses it (`GONE`) is removed at once: it serves nothing.
- A replica that is not Ready costs nothing to touch: an old one is updated in place, a leaving
  one removed (unless the rollout is frozen, which leaves old replicas alone).
- Taking down a Ready replica (removing it, or updating it in place, which restarts its pods) is
  a disruption. Disruptions are bounded per reconcile by maxUnavailable (at least 1), and only
  happen while the Ready replicas left number at least N - maxUnavailable.
- Make-before-break: a Ready replica that must move (`MOVE`), and an old one whose surge
  successor was placed, is removed only once N other replicas are Ready: its successor is up.
  Successors of replicas that must move may exceed maxSurge; new revisions never do.
- Moves that make room for another deployment's demand (`MAKE_ROOM`) are optional: a successor
  is placed only into a free surge slot, like a new revision, so a deployment never runs more than
  N + maxSurge replicas for another's sake (with maxSurge 0 it never moves), and the mover leaves
  once N others are Ready, within maxUnavailable per reconcile. A mover no slot covers stays.
- An old replica that no surge successor covers is updated in place (`KEEP`, it still fits its
  pools) or, when its pools no longer fit the new template (`MOVE`), removed so that its
  successor can be placed next time: both are disruptions within the budget.
- Scale-down (`SCALE_DOWN`) removes Ready replicas within the budget, not-Ready ones at once.
  Yielding an overcommitted pool (`YIELD`) is bounded per reconcile too, but not by the Ready
  floor: not every replica sharing those nodes can really run, so its Ready proves little.
- Renames within a replica: updating a replica renames its LLMInferenceServices. Where its pools
  have room for the new ones beside the old (`room`, reserved in the ledger), the old ones serve
  until the new ones are Ready: not a disruption, but the second copy takes a surge slot (as does
  a rename still under way, `replacing`), so at most maxSurge run at once and never with maxSurge
  0. A Ready replica that has room but no free slot (`waits`) is not taken down: it waits for a
  slot. Without room, the update is a disruption like any other.
- Frozen (paused, or halted past its progress deadline): no old replica is updated, replaced or
  removed; moves and scale-down of current replicas go on.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from modelplane.rollout.budget import Budget


class Fate(StrEnum):
    """What the scheduler decided for an existing replica, before the budget is applied."""

    KEEP = "Keep"  # stays where it is (an old one can be updated there)
    MOVE = "Move"  # must leave its pools: drained, deselected, no longer fits, overcommitted
    MAKE_ROOM = "MakeRoom"  # a current replica asked to leave for another deployment's demand
    SCALE_DOWN = "ScaleDown"  # above spec.replicas
    YIELD = "Yield"  # on a pool overcommitted by a race, where older replicas keep the nodes
    GONE = "Gone"  # its cluster is gone or no longer admits it


@dataclass(frozen=True, slots=True, kw_only=True)
class Replica:
    name: str
    current: bool  # renders the desired revision
    ready: bool  # observed Ready
    fate: Fate = Fate.KEEP
    room: bool = False  # an old replica whose pools hold its renamed objects beside the old: reserved
    waits: bool = False  # an old replica with room but no surge slot free: it waits rather than go down
    replacing: bool = False  # its rename is under way: the old objects serve until the new ones are Ready


@dataclass(frozen=True, slots=True, kw_only=True)
class Step:
    update: frozenset[str] = frozenset()  # old replicas updated in place this reconcile
    remove: frozenset[str] = frozenset()  # replicas removed this reconcile
    surge: frozenset[str] = frozenset()  # of `update`, those whose old objects serve until the new are Ready


def _surging(r: Replica, *, frozen: bool) -> bool:
    """Whether this reconcile updates `r` with its old objects serving until the new ones are Ready."""
    return r.room and r.ready and not r.current and r.fate is Fate.KEEP and not frozen


def surge_slots(*, replicas: int, budget: Budget, fleet: Sequence[Replica]) -> int:
    """Second copies (renames under way) that may still start: replicas above spec.replicas count too."""
    total = sum(1 for r in fleet if r.fate is not Fate.GONE)
    return max(0, replicas + budget.surge - total - sum(r.replacing for r in fleet))


def _count(fleet: Iterable[Replica], *, fate: Fate, current: bool | None = None, ready: bool | None = None) -> int:
    return sum(
        1
        for r in fleet
        if r.fate is fate and (current is None or r.current is current) and (ready is None or r.ready is ready)
    )


def wanted_new(*, replicas: int, budget: Budget, frozen: bool, fleet: Sequence[Replica]) -> int:
    """How many new-revision replicas to place this reconcile (the scheduler may place fewer)."""
    surging = sum(_surging(r, frozen=frozen) for r in fleet)
    missing = replicas - _count(fleet, fate=Fate.KEEP, current=True)
    if frozen:
        missing -= _count(fleet, fate=Fate.KEEP, current=False) + _count(fleet, fate=Fate.MOVE, current=False)
    else:
        missing -= _count(fleet, fate=Fate.KEEP, current=False, ready=False)  # updated in place at no cost
        missing -= surging  # renamed beside their old objects
    room = max(0, surge_slots(replicas=replicas, budget=budget, fleet=fleet) - surging)
    moves = _count(fleet, fate=Fate.MOVE, current=True)  # MAKE_ROOM successors only take `room`
    return max(0, min(missing, room + moves))


def step(*, replicas: int, budget: Budget, frozen: bool, fleet: Sequence[Replica], placed: int) -> Step:
    """What happens to each existing replica, given `placed` new ones were just placed."""
    ordered = sorted(fleet, key=lambda r: r.name)
    remove = {r.name for r in ordered if r.fate is Fate.GONE}
    surge = {r.name for r in ordered if _surging(r, frozen=frozen)}
    update: set[str] = set(surge)
    for r in ordered:
        if r.ready or r.fate is Fate.GONE or (frozen and not r.current):
            continue
        if r.fate is Fate.KEEP and not r.current:
            update.add(r.name)
        elif r.fate is not Fate.KEEP:
            remove.add(r.name)

    ready = sum(1 for r in ordered if r.ready and r.fate is not Fate.GONE)
    floor = replicas - budget.unavailable
    cap = max(budget.unavailable, 1)
    used = 0
    staying = sum(1 for r in ordered if r.name not in remove) + placed

    def disrupt(r: Replica, *, successor_ready: bool, into: set[str], floored: bool = True) -> bool:
        nonlocal ready, used, staying
        if used >= cap or (floored and ready - 1 < (replicas if successor_ready else floor)):
            return False
        into.add(r.name)
        ready -= 1
        used += 1
        if into is remove:
            staying -= 1
        return True

    live = [r for r in ordered if r.ready and r.name not in remove]
    for r in live:
        if r.fate in (Fate.SCALE_DOWN, Fate.YIELD):
            # a yielding replica's nodes are contested, so it may not be serving: no floor holds it
            disrupt(r, successor_ready=False, into=remove, floored=r.fate is Fate.SCALE_DOWN)
    for r in sorted(live, key=lambda r: (r.fate is not Fate.MOVE, r.name)):  # those that must leave first
        if r.fate in (Fate.MOVE, Fate.MAKE_ROOM) and r.current and staying > replicas:
            disrupt(r, successor_ready=True, into=remove)
    if frozen:
        return Step(update=frozenset(update), remove=frozenset(remove))
    old = [r for r in live if not r.current and r.fate in (Fate.KEEP, Fate.MOVE) and r.name not in surge]
    old.sort(key=lambda r: (r.fate is not Fate.MOVE, r.name))  # those that cannot stay go first
    for r in old:
        if staying > replicas:  # a surge successor exists for it: make before break
            disrupt(r, successor_ready=True, into=remove)
    covered = max(0, staying - replicas)  # old replicas a placed successor will still replace
    uncovered = [r for r in old if r.name not in remove][covered:]
    for r in uncovered:
        if not (r.waits and r.fate is Fate.KEEP):
            disrupt(r, successor_ready=False, into=update if r.fate is Fate.KEEP else remove)
    return Step(update=frozenset(update), remove=frozenset(remove), surge=frozenset(surge))
