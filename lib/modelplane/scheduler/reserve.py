"""Reserve room for larger demand the fleet can see, before placing a deployment's own replicas.

Deployments reconcile in whatever order the control plane runs them, and each places only its own
replicas. Placed one at a time in that order, early small replicas take the nodes that larger,
pickier ones need later: on a fleet short of GPUs the greedy serves about three quarters of what
an exact optimum serves, while placing the largest replicas first serves about 0.95 of it
(tests/benchmarks/quality.py). So every reconcile plays that order out over the demand it can
read: before placing its own replicas, a deployment reserves, on the scheduler's ledger, the
replicas every deployment ranked ahead of it still lacks, placed by the same filters, scores and
bind as if that deployment were reconciling. Ranked ahead means more GPUs per replica, ties to
the (namespace, name) that sorts first; every deployment ranks the same way, so the reconciles
agree whatever their order.

Room is held only where this deployment's own placements would cost a larger deployment a
replica: when they leave every larger one as many replicas as it can place without them, nothing
is held. Reservations only hold back new placements: a running replica is never removed for one.
Demand that fits nowhere reserves nothing. Nothing is played out when no larger deployment lacks
replicas (the steady state) or none of them matches a pool this one would take; otherwise the
MAX_RIVALS largest are played out in full (through each other, one that never touches these
pools still matters), holding at most MAX_RESERVED replicas, so a large fleet stays within the
scheduler's time budget.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence

from modelplane.devices import DeviceMatcher
from modelplane.errors import SpecError
from modelplane.model import Cluster, Deployment, ModelReplica
from modelplane.scheduler.bind import BindOutcome
from modelplane.scheduler.demand import Demand, devices_claimed, valid
from modelplane.scheduler.ledger import Ledger
from modelplane.scheduler.result import Reservation

MAX_RESERVED = 64
MAX_RIVALS = 24  # larger deployments played out per call, most GPUs per replica first


def rank(deployment: Deployment) -> tuple[int, str, str]:
    """The order the fleet serves demand in: most GPUs per replica first, then by name."""
    return (-devices_claimed(deployment.engines), deployment.namespace, deployment.name)


def hold_room(
    deployment: Deployment,
    clusters: Sequence[Cluster],
    replicas: Sequence[ModelReplica],
    deployments: Sequence[Deployment],
    *,
    ledger: Ledger,
    place: Callable[[Ledger], BindOutcome],
    matcher: DeviceMatcher,
) -> tuple[Reservation, ...]:
    """Charge to `ledger` the room larger deployments' missing replicas need, where `place` would take it.

    `place` binds this deployment's own replicas on a ledger; it is tried on a copy, so `ledger`
    changes only when room is held.
    """
    count = Counter((r.namespace, r.deployment) for r in replicas if not r.deleting)
    mine = rank(deployment)
    ahead = [d for d in deployments if rank(d) < mine and d.replicas > count[(d.namespace, d.name)]]
    if not ahead:
        return ()
    trial = ledger.copy()
    taken = {(p.cluster.name, o.pool) for p in place(trial).placements for o in p.options}
    rivals = [Demand(d, matcher) for d in sorted(ahead, key=rank)[:MAX_RIVALS]]
    by_name = {c.name: c for c in clusters}
    if not any(_matches_any(rival, taken, by_name) for rival in rivals):
        return ()

    def held(on: Ledger) -> tuple[Reservation, ...]:
        return _play_out(rivals, on, clusters=clusters, replicas=replicas, count=count, matcher=matcher)

    if held(trial) == held(ledger.copy()):
        return ()
    return held(ledger)


def _play_out(
    rivals: Sequence[Demand],
    ledger: Ledger,
    *,
    clusters: Sequence[Cluster],
    replicas: Sequence[ModelReplica],
    count: Mapping[tuple[str, str], int],
    matcher: DeviceMatcher,
) -> tuple[Reservation, ...]:
    """Charge to `ledger` the missing replicas of `rivals`, in order, as their own reconciles would place them."""
    left = MAX_RESERVED
    out: list[Reservation] = []
    for rival in rivals:
        d = rival.deployment
        if left <= 0:
            break
        if not valid(d, clusters, matcher):
            continue  # its own reconcile reports the bad spec; it places nothing, so it reserves nothing
        missing = min(d.replicas - count[(d.namespace, d.name)], left)
        spread = Counter(r.cluster for r in replicas if (r.namespace, r.deployment) == (d.namespace, d.name))
        placed = rival.place(ledger, clusters, spread, count=missing)
        left -= missing
        if placed.placements:
            out.append(Reservation(deployment=f"{d.namespace}/{d.name}", replicas=len(placed.placements)))
    return tuple(out)


def _matches_any(rival: Demand, pools: set[tuple[str, str]], clusters: Mapping[str, Cluster]) -> bool:
    """Whether some engine of the rival matches one of `pools` (cluster, pool)."""
    if not pools:
        return False
    try:
        return any(
            pool in rival.engines.matching_pools(clusters[cluster])
            for cluster, pool in sorted(pools)
            if cluster in clusters
        )
    except SpecError:
        return False  # its own reconcile reports the bad selector; it places nothing, so it holds nothing
