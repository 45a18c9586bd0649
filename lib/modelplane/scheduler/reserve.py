"""Reserve room for larger demand the fleet can see, before placing a deployment's own replicas.

Deployments reconcile in whatever order the control plane runs them, and each places only its own
replicas. Placed one at a time in that order, early small replicas take the nodes that larger,
pickier ones need later: on a fleet short of GPUs the greedy serves about three quarters of what
an exact optimum serves, while placing the largest replicas first serves about 0.95 of it
(tests/benchmarks/quality.py). So every reconcile plays that order out over the demand it can
read: before placing its own replicas, a deployment reserves, on the scheduler's ledger, the
replicas every deployment ranked ahead of it still lacks, placed by the same scores and bind as
if that deployment were reconciling, over the pools that deployment stated it can use (demand.py;
another tenant's spec is never evaluated here). Ranked ahead means, in turn: a team still within
its fleet quota's guarantee, a higher priority, more GPUs per replica, the (namespace, name) that
sorts first (scheduler/policy.py); every deployment ranks the same way, so the reconciles agree
whatever their order.

Room is held only where this deployment's own placements would cost a larger deployment a
replica: when they leave every larger one as many replicas as it can place without them, nothing
is held. Reservations only hold back new placements: a running replica is never removed for one.
Demand that fits nowhere (a statement with an engine that has no pool) is not a rival at all, and
only replicas actually held count against the budget, so unplaceable demand cannot switch held
room off for anyone ranked behind it. Nothing is played out when no larger deployment lacks
replicas (the steady state) or none of them can use a pool this one would take; otherwise the
MAX_RIVALS largest are played out in full (through each other, one that never touches these
pools still matters), holding at most MAX_RESERVED replicas, so the work per call has a fixed
bound and is otherwise linear in the statements read.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence

from modelplane.model import Cluster, ModelReplica
from modelplane.scheduler.bind import BindOutcome
from modelplane.scheduler.demand import Demand
from modelplane.scheduler.displace import Rank
from modelplane.scheduler.ledger import Ledger
from modelplane.scheduler.result import Reservation
from modelplane.stated import StatedDemand

MAX_RESERVED = 64
MAX_RIVALS = 24  # larger deployments played out per call, most GPUs per replica first


def lacking(demands: Sequence[StatedDemand], replicas: Sequence[ModelReplica]) -> dict[tuple[str, str], int]:
    """Replicas each placeable statement still lacks, given the replicas the fleet observes."""
    count = Counter((r.namespace, r.deployment) for r in replicas if not r.deleting)
    return {d.key: d.replicas - count[d.key] for d in demands if d.placeable() and d.replicas > count[d.key]}


def hold_room(
    me: StatedDemand,
    clusters: Sequence[Cluster],
    replicas: Sequence[ModelReplica],
    demands: Sequence[StatedDemand],
    *,
    ledger: Ledger,
    place: Callable[[Ledger], BindOutcome],
    rank: Callable[[StatedDemand], Rank],
) -> tuple[Reservation, ...]:
    """Charge to `ledger` the room larger deployments' missing replicas need, where `place` would take it.

    `me` is this deployment's own statement (its rank); `place` binds its own replicas on a ledger;
    it is tried on a copy, so `ledger` changes only when room is held. `rank` orders the fleet's
    demand (displace.ranking: guarantee, priority, size, name).
    """
    missing = lacking(demands, replicas)
    mine = rank(me)
    ahead = sorted((d for d in demands if d.key in missing and d.key != me.key and rank(d) < mine), key=rank)
    if not ahead:
        return ()
    trial = ledger.copy()
    taken = {(p.cluster.name, pool) for p in place(trial).placements for o in p.options for pool, _ in o.pool_charges()}
    rivals = [Demand(d) for d in ahead[:MAX_RIVALS]]
    by_name = {c.name: c for c in clusters}
    if not any(rival.uses(by_name[c], p) for rival in rivals for c, p in sorted(taken) if c in by_name):
        return ()

    def held(on: Ledger) -> tuple[Reservation, ...]:
        return _play_out(rivals, on, clusters=clusters, replicas=replicas, missing=missing)

    without = ledger.copy()
    reserved = held(without)
    if held(trial) == reserved:
        return ()
    ledger.adopt(without)
    return reserved


def _play_out(
    rivals: Sequence[Demand],
    ledger: Ledger,
    *,
    clusters: Sequence[Cluster],
    replicas: Sequence[ModelReplica],
    missing: Mapping[tuple[str, str], int],
) -> tuple[Reservation, ...]:
    """Charge to `ledger` the missing replicas of `rivals`, in order, as their own reconciles would place them."""
    left = MAX_RESERVED
    out: list[Reservation] = []
    for rival in rivals:
        d = rival.stated
        if left <= 0:
            break
        spread = Counter(r.cluster for r in replicas if (r.namespace, r.deployment) == d.key)
        placed = rival.place(ledger, clusters, spread, count=min(missing[d.key], left))
        left -= len(placed.placements)  # only what is held counts: demand that fits nowhere spends nothing
        if placed.placements:
            out.append(Reservation(deployment=d.subject, replicas=len(placed.placements)))
    return tuple(out)
