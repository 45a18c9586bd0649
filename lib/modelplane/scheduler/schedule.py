"""The only orchestrator: retain -> scale down -> arbitrate -> ledger -> filter -> score -> bind.

`schedule()` is a pure function of (deployment, clusters, every observed replica of the fleet).
Inputs are sorted on entry and every tie ends in a name, so shuffled inputs give identical
results. Expected rejections are Statuses in the Diagnosis; a device selector that does not
compile or fails to evaluate on every device it reaches (the device matcher's validate), and a
spec change that would leave running replicas no pool anywhere (unplaceable.py), raise
InvalidNodeSelectorError: then nothing is decided, and every running replica stays.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import replace
from types import MappingProxyType
from typing import Protocol

from modelplane import names
from modelplane.devices import DeviceMatcher
from modelplane.model import Cluster, Deployment, ModelReplica, PoolCharge
from modelplane.scheduler.arbitrate import left_over, yield_reason
from modelplane.scheduler.bind import BindOutcome, bind
from modelplane.scheduler.capacity import PoolCapacity, take_all
from modelplane.scheduler.displace import find_moves, ranking
from modelplane.scheduler.engines import EngineOptions, cost_by_pool
from modelplane.scheduler.filters import Context, FilterRunner
from modelplane.scheduler.ledger import Ledger
from modelplane.scheduler.limit import QuotaGate
from modelplane.scheduler.packing import Packing
from modelplane.scheduler.policy import REASON_PREEMPTED, REASON_RECLAIMED, FleetPolicy
from modelplane.scheduler.replicas import build_replica
from modelplane.scheduler.reserve import hold_room
from modelplane.scheduler.result import Diagnosis, Move, RemovedReplica, ScheduleResult
from modelplane.scheduler.retain import (
    REASON_CLUSTER_DELETED,
    REASON_DUPLICATE,
    REASON_MAKING_ROOM,
    REASON_NAMESPACE_NOT_ADMITTED,
    REASON_POOL_MISMATCH,
    REASON_SCALED_DOWN,
    Kept,
    charge_kept,
    hold,
    overlap,
    pinned_options,
)
from modelplane.scheduler.retain import REASON_PREEMPTED as RETAIN_PREEMPTED
from modelplane.scheduler.retain import REASON_RECLAIMED as RETAIN_RECLAIMED
from modelplane.scheduler.scale_down import scale_down
from modelplane.scheduler.scarcity import Scarcity
from modelplane.scheduler.selectors import admits_namespace
from modelplane.scheduler.state import state_demand
from modelplane.scheduler.unplaceable import check_placeable
from modelplane.scheduler.unreadable import Unreadable
from modelplane.stated import StatedDemand


def schedule(
    deployment: Deployment,
    clusters: Sequence[Cluster],
    replicas: Sequence[ModelReplica],
    *,
    matcher: DeviceMatcher | None = None,
    unreadable: Unreadable | None = None,
    composed: Collection[str] | None = None,
    stale: Collection[str] = (),
    new_count: NewCount | None = None,
    demands: Sequence[StatedDemand] | None = None,
    policy: FleetPolicy | None = None,
) -> ScheduleResult:
    """Place `deployment`'s replicas on `clusters`, given every observed replica of the fleet.

    `matcher` lets a long-running caller share selector results across calls; by default each call
    matches from scratch. `unreadable` names the fleet objects the caller could not read.
    `composed` names the replicas the deployment composes: they are its own whatever their labels
    say, and a replica labelled as its own that it does not compose is someone else's (charged,
    never kept); None decides by the deployment label alone.

    Rollouts (modelplane.rollout) use the rest. `stale` names own replicas not at the deployment's
    revision: scale-down takes them first. `new_count`, given the names of the replicas kept, the
    removed ones and a `Room` to reserve a kept replica's second copy (the new LLMInferenceServices
    of a rename, beside the old ones), says how many new replicas to place (by default: the
    shortfall); what it reserves is charged before any placement. Removed
    replicas that are Ready stay charged to the ledger (make-before-break: they may keep running
    until a successor is Ready), unless their cluster is gone or refuses them; a kept replica is
    charged at the larger of its observed and its new cost, since it may keep rendering the former.

    `demands`, the statements of the other deployments the caller can read (modelplane.stated;
    this deployment's own, if among them, is replaced by the one worked out here), lets the fleet
    hold room for larger demand (reserve.py) and correct early placements (displace.py): a Ready
    replica of this deployment that holds the only room of another's unplaced demand leaves,
    make-before-break, once a successor elsewhere is Ready. Not while a rollout of this deployment
    is under way (`stale`), nor while one of its replicas already has to leave. The result carries
    this deployment's own statement, for the others.

    `policy`, the fleet's quotas and priorities (policy.py), ranks held room and moves, keeps new
    replicas within the namespace's quota limit, and lets blocked demand of a team within its
    guarantee, or of higher priority, evict replicas that cannot move (this deployment's own then
    leave as Reclaimed or Preempted). Without one, every deployment ranks by size alone.
    """
    policy = policy if policy is not None else FleetPolicy()
    matcher = matcher if matcher is not None else DeviceMatcher()
    unreadable = unreadable if unreadable is not None else Unreadable()
    fleet = sorted(clusters, key=lambda c: c.name)
    matcher.validate(deployment, fleet)
    by_name = {c.name: c for c in fleet}
    observed = sorted(replicas, key=lambda r: (r.namespace, r.deployment, r.cluster, r.index, r.name))
    ours, others = split_own(deployment, observed, composed)
    charged = [r for r in others if _charged(deployment, by_name.get(r.cluster), r)]
    ledger = Ledger(fleet)
    for r in charged:
        ledger.charge_replica(r)
    engines = EngineOptions(deployment, matcher)
    stated = state_demand(deployment, fleet, engines)
    me_key = (deployment.namespace, deployment.name)
    fleet_demand = (
        None if demands is None else sorted([*(d for d in demands if d.key != me_key), stated], key=lambda d: d.key)
    )

    # Retain: spec checks per observed replica (one replica per identity).
    removed: list[RemovedReplica] = []
    kept: list[Kept] = []
    lost_pool: list[tuple[ModelReplica, Cluster]] = []
    seen: set[tuple[str, int]] = set()
    for r in ours:
        if (r.cluster, r.index) in seen:
            removed.append(_removed(r, REASON_DUPLICATE))
            continue
        seen.add((r.cluster, r.index))
        cluster = by_name.get(r.cluster)
        if cluster is None and r.cluster in unreadable.clusters:
            kept.append(hold(r))
            continue
        verdict = pinned_options(deployment, cluster, r, engines)
        if isinstance(verdict, str):
            removed.append(_removed(r, verdict))
            if verdict == REASON_POOL_MISMATCH and cluster is not None:
                lost_pool.append((r, cluster))
        elif cluster is not None:
            kept.append(Kept(observed=r, cluster=cluster, options=verdict))
    check_placeable(deployment, fleet, lost_pool, engines, matcher)
    shares = policy.shares(fleet, observed)  # read once: moves and held room rank demand by it
    moves = (
        find_moves(fleet, observed, fleet_demand, caller=me_key, policy=policy, shares=shares) if fleet_demand else ()
    )
    # One change at a time: not while a rollout is under way or a replica already has to leave.
    acting = not stale and not removed
    making_room = {k.observed.name for k in kept if acting and any(m.replica.name == k.observed.name for m in moves)}
    evicted = {m.replica.name: m.evicted for m in moves if m.evicted}
    removed.extend(
        _removed(k.observed, _EVICTED.get(evicted.get(k.observed.name, ""), REASON_MAKING_ROOM))
        for k in kept
        if k.observed.name in making_room
    )
    kept = [k for k in kept if k.observed.name not in making_room]
    me = f"{deployment.namespace}/{deployment.name}"
    moves = tuple(m for m in moves if m.replica.name in making_room or m.demand == me)

    # Scale down; then yield the nodes of overcommitted pools to older replicas; then charge what
    # stays (growth is judged against the ledger here).
    kept, dropped = scale_down(kept, deployment.replicas, stale=stale)
    removed.extend(_removed(k.observed, REASON_SCALED_DOWN) for k in dropped)
    kept, yielded = _arbitrate(kept, charged, ledger, unreadable)
    removed.extend(yielded)
    leaving = {x.name for x in removed if x.reason not in GONE_REASONS}
    for r in ours:
        if r.ready and r.name in leaving:
            ledger.charge(r.cluster, r.charges_by_pool())
    kept, outgrown = charge_kept(ledger, kept)
    removed.extend(_removed(k.observed, reason) for k, reason in outgrown)
    for k, _ in outgrown:
        if k.observed.ready:
            ledger.charge(k.cluster.name, k.observed.charges_by_pool())
    for k in kept:
        if not k.held:
            new_cost = cost_by_pool(k.options)
            old_cost = k.observed.charges_by_pool()
            ledger.charge(k.cluster.name, {p: c.beyond(new_cost.get(p)) for p, c in old_cost.items()})
    _hold_freed_room(ledger, [m for m in moves if m.replica.name in making_room])
    retained = [_retained(deployment, k) for k in kept]
    shortfall = max(deployment.replicas - len(retained), 0)
    kept_by_name = {k.observed.name: k for k in kept if not k.held}

    def room(name: str, *, reserve: bool = True) -> bool:
        k = kept_by_name.get(name)
        if k is None:
            return False
        both = overlap(k.observed.charges_by_pool(), cost_by_pool(k.options))  # beyond what the ledger holds
        if not ledger.fits(k.cluster.name, both):
            return False
        if reserve:
            ledger.charge(k.cluster.name, both)
        return True

    count = (
        shortfall if new_count is None else new_count(frozenset(k.observed.name for k in kept), tuple(removed), room)
    )

    # Filter, score, bind the shortfall. Indexes of replicas removed here stay unused this call, so
    # a re-placed replica gets a new name and `created` never overlaps `removed`; so do indexes of
    # replicas that carry this deployment's label without being its own (their names are taken).
    own_names = {r.name for r in ours}
    taken: dict[str, set[int]] = {}
    for r in observed:
        if r.name in own_names or (r.namespace == deployment.namespace and r.deployment == deployment.name):
            taken.setdefault(r.cluster, set()).add(r.index)

    # The team's fleet quota as it stands without this deployment's new replicas (policy.py).
    team_use = policy.usage(fleet, charged)
    for k in kept:
        policy.release(deployment.namespace, k.cluster, _charges(k), team_use, sign=1)
    limited = policy.active and policy.quota_of(deployment.namespace) is not None

    others_state = fleet_demand is not None and any(d.key != me_key for d in fleet_demand)
    scarcity = Scarcity(fleet, fleet_demand, me=me_key) if fleet_demand and others_state and count > 0 else None

    def place(on: Ledger) -> BindOutcome:
        gate = QuotaGate(policy, deployment.namespace, Counter(team_use)) if limited else None
        ctx = Context(
            deployment,
            engines,
            on,
            unreadable_replicas=unreadable.replicas_on,
            packing=Packing(engines),
            quota=gate,
            scarcity=scarcity,
        )
        return bind(
            ctx,
            FilterRunner(ctx),
            clusters=fleet,
            count=count,
            taken={name: frozenset(indexes) for name, indexes in taken.items()},
            replicas_on=Counter(r.cluster for r in retained),
        )

    reserved = (
        hold_room(
            stated,
            fleet,
            observed,
            fleet_demand,
            ledger=ledger,
            place=place,
            rank=ranking(policy, shares.use, shares.kinds),
        )
        if fleet_demand and count > 0
        else ()
    )
    outcome = place(ledger)
    created = [
        build_replica(
            deployment=deployment,
            cluster=p.cluster,
            name=names.replica_name(deployment.name, p.cluster.name, p.index),
            index=p.index,
            options=p.options,
            ready=False,
        )
        for p in outcome.placements
    ]
    desired = sorted([*retained, *created], key=lambda r: (r.cluster, r.index))
    for p in outcome.placements:
        policy.release(deployment.namespace, p.cluster, cost_by_pool(p.options), team_use, sign=1)
    statuses = {**outcome.statuses, **unreadable.statuses(frozenset(by_name))}
    return ScheduleResult(
        replicas=tuple(desired),
        created=frozenset(r.name for r in created),
        removed=tuple(sorted(removed, key=lambda r: (r.cluster, r.index, r.name))),
        diagnosis=Diagnosis(
            desired=deployment.replicas,
            placed=len(desired),
            total_clusters=len(fleet) + len(unreadable.statuses(frozenset(by_name))),
            statuses=MappingProxyType(dict(sorted(statuses.items()))),
            scores=outcome.scores,
            evaluated=outcome.evaluated,
            reserved=reserved,
        ),
        held=frozenset(k.observed.name for k in kept if k.held),
        moves=moves,
        statement=stated,
        quota=policy.standing(deployment.namespace, team_use),
    )


class Room(Protocol):
    """Whether kept replica `name`'s pools hold a second copy of it beside the first; reserved unless told not."""

    def __call__(self, name: str, *, reserve: bool = True) -> bool: ...


NewCount = Callable[[frozenset[str], Sequence[RemovedReplica], Room], int]
# Reasons a replica leaves without holding anything: its cluster is gone, it duplicates another, or
# its cluster refuses its namespace (the ModelReplica handler then renders nothing there).
GONE_REASONS = frozenset({REASON_CLUSTER_DELETED, REASON_DUPLICATE, REASON_NAMESPACE_NOT_ADMITTED})


def split_own(
    deployment: Deployment, observed: Sequence[ModelReplica], composed: Collection[str] | None
) -> tuple[list[ModelReplica], list[ModelReplica]]:
    """(the deployment's own replicas, everyone else's)."""
    ours: list[ModelReplica] = []
    others: list[ModelReplica] = []
    for r in observed:
        in_namespace = r.namespace == deployment.namespace
        own = in_namespace and (r.name in composed if composed is not None else r.deployment == deployment.name)
        (ours if own else others).append(r)
    return ours, others


def _charged(deployment: Deployment, cluster: Cluster | None, replica: ModelReplica) -> bool:
    """Whether another deployment's replica holds nodes: not when its cluster refuses its namespace.

    Such a replica is never rendered (the ModelReplica handler checks admission), so it holds
    nothing. Only the deployment's own namespace has known labels; elsewhere a cluster admitting
    by labels may admit, and the replica is charged.
    """
    if cluster is None:
        return True
    labels = deployment.namespace_labels if replica.namespace == deployment.namespace else None
    return admits_namespace(cluster, replica.namespace, labels) is not False


def _arbitrate(
    kept: list[Kept], charged: Sequence[ModelReplica], ledger: Ledger, unreadable: Unreadable
) -> tuple[list[Kept], list[RemovedReplica]]:
    """Split kept replicas into those keeping their nodes and those yielding them (arbitrate.py).

    Every replica holding nodes on an overcommitted cluster takes part, except replicas being
    deleted (they are leaving) and replicas on clusters where one cannot be read (nobody can rank an
    unknown holder). Clusters within capacity are not ranked at all: nobody there can lose.
    """
    over = _overcommitted(kept, ledger) - set(unreadable.replicas_on)
    if not over:
        return kept, []
    holders = [r for r in charged if not r.deleting and r.cluster in over]
    holders += [k.observed for k in kept if not k.held and k.cluster.name in over]
    lost = left_over({k.cluster.name: k.cluster for k in kept if k.cluster.name in over}, holders)
    staying = [k for k in kept if (k.observed.namespace, k.observed.name) not in lost]
    yielded = [
        _removed(k.observed, yield_reason(lost[(k.observed.namespace, k.observed.name)]))
        for k in kept
        if (k.observed.namespace, k.observed.name) in lost
    ]
    return staying, yielded


def _hold_freed_room(ledger: Ledger, moves: Sequence[Move]) -> None:
    """Charge the room the replicas making room free, beyond their own nodes, to the demand it is freed for.

    Their successors are placed while they still hold their nodes (make-before-break); without
    this they would land on the very room being freed, and the move would never complete. Moves of
    one blocked replica share one room, charged once.
    """
    rooms = {(m.cluster, m.demand): m.room for m in moves}
    for (cluster, _), room in sorted(rooms.items()):
        ledger.charge(cluster, dict(room))


def _overcommitted(kept: Sequence[Kept], ledger: Ledger) -> set[str]:
    """Clusters hosting a kept replica where everyone's observed charges exceed a pool.

    The ledger holds everyone else's charges; kept replicas are charged only later, so their
    observed cost is added here. Only a cluster hosting one of ours matters: only ours can move.
    """
    pools: dict[str, dict[str, PoolCapacity]] = {}
    for k in kept:
        if not k.held:
            take_all(pools.setdefault(k.cluster.name, ledger.pools(k.cluster.name)), k.observed.charges_by_pool())
    return {name for name, caps in pools.items() if not all(cap.holds() for cap in caps.values())}


def _retained(deployment: Deployment, k: Kept) -> ModelReplica:
    if k.held:  # nothing to re-resolve against: as observed, under this deployment's identity
        return replace(
            k.observed, namespace=deployment.namespace, deployment=deployment.name, created=None, deleting=False
        )
    return build_replica(
        deployment=deployment,
        cluster=k.cluster,
        name=k.observed.name,
        index=k.observed.index,
        options=k.options,
        ready=k.observed.ready,
    )


_EVICTED = {REASON_RECLAIMED: RETAIN_RECLAIMED, REASON_PREEMPTED: RETAIN_PREEMPTED}


def _charges(k: Kept) -> Mapping[str, PoolCharge]:
    """What a kept replica holds for its quota: as observed when held, else at its new cost."""
    return k.observed.charges_by_pool() if k.held else cost_by_pool(k.options)


def _removed(replica: ModelReplica, reason: str) -> RemovedReplica:
    return RemovedReplica(name=replica.name, cluster=replica.cluster, index=replica.index, reason=reason)
