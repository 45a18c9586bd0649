"""Make room: move a Ready replica off the pools that another deployment's unplaced demand needs.

Deployments are placed one at a time as they arrive, so an early, flexible replica can take the
only pool that later, pickier demand fits. Every deployment's reconcile works out the same moves
from the same observed fleet, so concurrent reconciles agree on who moves and only the owner acts:

- Demand is what each deployment stated (modelplane.stated): another tenant's spec is never
  evaluated. It is blocked when a deployment has fewer replicas than it asks for, could place one
  somewhere on an empty fleet, and none more fits anywhere, everyone's observed replicas charged as
  they are. Blocked deployments are served in the fleet's rank (policy.py: a team within its
  quota guarantee, then priority, then GPUs per replica, then the name).
- A candidate is another deployment's Ready replica holding a pool the blocked deployment's
  engines match, on a cluster that would take it but for capacity: lowest priority first, then
  the smallest holding, then the newest. Where the fleet's quotas let the blocked demand evict a
  replica (reclaim, preemption: policy.py), it is a candidate Ready or not, and when it cannot
  move it leaves without a successor.
- It moves when, with it gone, one more replica of the blocked deployment fits, and its own
  deployment can place a successor elsewhere first (make-before-break: the successor is charged
  while the replica still holds its nodes). The room is claimed for the blocked replica before any
  successor is placed, so a successor can never land on the very room its move frees (the owner's
  schedule() charges the same room, Move.room, before placing it). A deployment above its
  replica count already has the successor. Where one is not enough (a two-node gang whose pool
  two replicas hold), the candidates on one cluster leave together, each with its successor;
  not on a shared pool (packing: Devices), where one leaver at most makes room (_on_shared_pool).
- Each move is applied to the trial fleet (the successor and the blocked replica placed, the
  replica gone) before the next blocked deployment is served, so moves never claim the same room.

Hysteresis: a move needs a blocked deployment that then fits, so every move that completes places
one more replica of demand that could not run; nothing moves back and forth. The owner's rollout
budget paces the moves (modelplane.rollout: a Ready replica leaves only once its successor is
Ready), and a replica that is not Ready is never moved. At most MAX_TRIALS candidates are tried
and at most MAX_BLOCKED blocked deployments examined per call; finding the blocked demand that
concerns the caller is one pass over the statements. So the work of one call has a fixed bound
beyond a scan linear in the statements it reads, however many deployments are blocked.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from modelplane.model import Cluster, ModelReplica, PoolCharge
from modelplane.scheduler.bind import Placement
from modelplane.scheduler.capacity import shares_devices
from modelplane.scheduler.demand import Demand
from modelplane.scheduler.engines import cost_by_pool
from modelplane.scheduler.filters import FilterRunner
from modelplane.scheduler.ledger import Ledger
from modelplane.scheduler.policy import FleetPolicy, Shares, Use
from modelplane.scheduler.result import Move
from modelplane.stated import StatedDemand, pool_kind

MAX_TRIALS = 64
MAX_BLOCKED = 16  # blocked deployments examined per call, in (namespace, name) order


def _owner(replica: ModelReplica) -> tuple[str, str]:
    return (replica.namespace, replica.deployment)


def find_moves(
    clusters: Sequence[Cluster],
    replicas: Sequence[ModelReplica],
    demands: Sequence[StatedDemand],
    *,
    caller: tuple[str, str] | None = None,
    policy: FleetPolicy | None = None,
    shares: Shares | None = None,
) -> tuple[Move, ...]:
    """The moves the fleet should make now, the same whichever deployment asks.

    `clusters` sorted by name, `replicas` every observed replica of the fleet, `demands` every
    deployment's statement the caller can read (a replica whose deployment stated nothing never
    moves: nobody could place its successor). `caller`, the (namespace, name) asking, skips
    blocked demand that none of its Ready replicas could make room for and that is not its own:
    the moves that concern it stay the same, at a fraction of the work on a large fleet.

    `policy` (quotas and priorities) serves blocked demand in its rank, and lets it evict where no
    successor can be placed (policy.py: reclaim, preemption). Evictions make room for at most its
    quota's `max_evictions` replicas of one blocked deployment at once: none while room is already
    being freed for it (replicas being deleted would let it fit). `shares`, what the caller already
    read of the fleet under that policy (policy.shares over the same clusters and replicas).
    """
    policy = policy if policy is not None else FleetPolicy()
    live = [r for r in replicas if not r.deleting]
    count = Counter(_owner(r) for r in live)
    shares = shares if shares is not None else policy.shares(clusters, replicas)
    use = Counter(shares.use)  # evictions on the trial fleet change it
    kinds = shares.kinds
    rank = ranking(policy, shares.use, kinds)
    blocked = sorted((d for d in demands if d.placeable() and d.replicas > count[d.key]), key=rank)
    if not blocked:
        return ()
    if caller is not None:
        # Only Ready replicas move; under a fleet policy any replica of the caller may be evicted.
        held = _held_kinds(clusters, [r for r in live if (r.ready or policy.active) and _owner(r) == caller])
        blocked = [d for d in blocked if d.key == caller or _touches(d, held)]
    if not blocked:
        return ()
    fleet = _Fleet(clusters, replicas, demands, policy=policy, use=use, kinds=kinds)
    freeing = _Freeing(clusters, live) if policy.active and len(live) < len(replicas) else None
    moves: list[Move] = []
    budget = MAX_TRIALS
    for demand in blocked[:MAX_BLOCKED]:
        trial = fleet.trial(demand)
        runner = trial.runner(fleet.ledger)
        if any(runner.status(c).fits for c in clusters):
            continue  # not blocked: it places itself on its next reconcile
        if freeing is not None and freeing.lets_fit(trial, clusters):
            continue  # room is being freed for it: nothing more leaves until it is placed
        missing = demand.replicas - count[demand.key]
        fleet.evictions_left = _max_evictions(policy, demand)
        while missing > 0 and budget > 0:
            made, used = fleet.make_room(demand, fleet.candidates(demand, runner), budget)
            budget -= used
            if not made:
                break
            if any(m.evicted for m in made):
                fleet.evictions_left -= 1
            moves.extend(made)
            missing -= 1
    return tuple(moves)


def _held_kinds(clusters: Sequence[Cluster], replicas: Sequence[ModelReplica]) -> dict[str, frozenset[str]]:
    """Per cluster, the kinds of the pools `replicas` hold nodes of."""
    by_name = {c.name: c for c in clusters}
    held: dict[str, set[str]] = {}
    for r in replicas:
        cluster = by_name.get(r.cluster)
        if cluster is None:
            continue
        pools = {p.name: p for p in cluster.pools}
        for pool, nodes in r.node_cost_by_pool().items():
            if nodes and pool in pools:
                held.setdefault(r.cluster, set()).add(pool_kind(pools[pool]))
    return {c: frozenset(kinds) for c, kinds in held.items()}


def _touches(demand: StatedDemand, held: Mapping[str, frozenset[str]]) -> bool:
    """Whether `demand` could use a pool of one of the kinds held on one of the clusters held."""
    kinds = {o.kind for e in demand.engines for o in e.options}
    return any(demand.may_use(c) and not kinds.isdisjoint(k) for c, k in held.items())


def ranking(policy: FleetPolicy, use: Use, kinds: Mapping[str, frozenset[str]]) -> Callable[[StatedDemand], Rank]:
    """The order the fleet serves demand in (policy.py): within guarantee, priority, GPUs per replica, name."""

    def rank(d: StatedDemand) -> Rank:
        within = policy.active and policy.within_guarantee(d, use, kinds)
        return (0 if within else 1, -policy.priority(d), -d.devices, d.namespace, d.name)

    return rank


Rank = tuple[int, int, int, str, str]


def _max_evictions(policy: FleetPolicy, demand: StatedDemand) -> int:
    quota = policy.quota_of(demand.namespace)
    return 0 if quota is None else quota.max_evictions


class _Freeing:
    """The fleet without the replicas being deleted: whether blocked demand fits once they are gone."""

    def __init__(self, clusters: Sequence[Cluster], live: Sequence[ModelReplica]) -> None:
        self.ledger = Ledger(clusters)
        for r in live:
            self.ledger.charge_replica(r)

    def lets_fit(self, trial: Demand, clusters: Sequence[Cluster]) -> bool:
        runner = trial.runner(self.ledger)
        return any(runner.status(c).fits for c in clusters)


class _Fleet:
    """The trial fleet: everyone's observed replicas charged, moves applied as they are found."""

    def __init__(
        self,
        clusters: Sequence[Cluster],
        replicas: Sequence[ModelReplica],
        demands: Sequence[StatedDemand],
        *,
        policy: FleetPolicy,
        use: Use,
        kinds: Mapping[str, frozenset[str]],
    ) -> None:
        self.policy = policy
        self.use = use
        self.kinds = kinds
        self.evictions_left = 0  # replicas of the blocked deployment being served that evictions may make room for
        self.clusters = clusters
        self.by_cluster = {c.name: c for c in clusters}
        self.live = [r for r in replicas if not r.deleting]
        self.by_key = {d.key: d for d in demands}
        self.ledger = Ledger(clusters)
        for r in replicas:
            self.ledger.charge_replica(r)
        self.moving: set[str] = set()
        self.successors: Counter[tuple[str, str]] = Counter()  # placed on the trial fleet, per deployment
        self._trials: dict[tuple[str, str], Demand] = {}

    def trial(self, demand: StatedDemand) -> Demand:
        return self._trials.setdefault(demand.key, Demand(demand))

    def candidates(self, demand: StatedDemand, runner: FilterRunner) -> list[ModelReplica]:
        """Replicas of other deployments on pools `demand` could use: lowest priority, then fewest
        nodes, then newest first (the least served is lost).

        A replica is a candidate when it is Ready and its deployment movable, or when `demand` may
        evict it (Ready or not: one still starting holds its GPUs all the same).
        """
        usable = self.trial(demand).usable(self.clusters, runner)
        found = [
            r
            for r in self.live
            if _owner(r) != demand.key and r.name not in self.moving and _owner(r) in self.by_key
            if (r.ready and self.by_key[_owner(r)].movable) or self._eviction(demand, r)
            if any((r.cluster, p) in usable for p, n in r.node_cost_by_pool().items() if n)
        ]
        found.sort(key=lambda r: (r.namespace, r.deployment, r.cluster, r.index))
        found.sort(key=lambda r: r.created or "", reverse=True)  # stable: names break ties among equals
        found.sort(key=lambda r: (self.policy.priority(self.by_key[_owner(r)]), sum(r.node_cost_by_pool().values())))
        return found

    def _eviction(self, demand: StatedDemand, replica: ModelReplica) -> str | None:
        """Why `demand` may take `replica`'s GPUs without a successor (policy.py), or None."""
        if self.evictions_left <= 0 or not self.policy.active:
            return None
        cluster = self.by_cluster.get(replica.cluster)
        if cluster is None:
            return None
        return self.policy.eviction(
            demand,
            self.by_key[_owner(replica)],
            victim_cluster=cluster,
            victim_charges=replica.charges_by_pool(),
            use=self.use,
            kinds=self.kinds,
        )

    def make_room(
        self, demand: StatedDemand, candidates: Sequence[ModelReplica], budget: int
    ) -> tuple[list[Move], int]:
        """The moves that let one more replica of `demand` fit, applied to the trial fleet; and the tries spent.

        Clusters are tried in the order of their first candidate; on each, the fewest candidates
        (smallest first) whose leaving lets `demand` fit there leave: a two-node gang may need two
        holders to move. A cluster where it would not fit even with every candidate gone is skipped;
        one where a successor finds no room beside the room being freed is left as it was.
        """
        trial = self.trial(demand)
        by_cluster: dict[str, list[ModelReplica]] = {}
        for r in candidates:
            by_cluster.setdefault(r.cluster, []).append(r)
        used = 0
        for name, group in by_cluster.items():
            if used >= budget:
                break
            cluster = self.by_cluster[name]
            if not self._fits_without(trial, cluster, group):
                continue
            leaving = next(
                (group[:n] for n in range(1, len(group) + 1) if self._fits_without(trial, cluster, group[:n])), group
            )
            if len(leaving) > 1 and _on_shared_pool(cluster, leaving):
                continue  # see _on_shared_pool
            if len(leaving) > budget - used:
                break
            used += len(leaving)
            made = self._move(trial, cluster, leaving)
            if made is not None:
                return made, used
        return [], used

    def _fits_without(self, trial: Demand, cluster: Cluster, replicas: Sequence[ModelReplica]) -> bool:
        """Whether `trial`'s deployment fits `cluster` with every one of `replicas` gone."""
        for r in replicas:
            self.ledger.charge(r.cluster, r.charges_by_pool(), sign=-1)
        fits = trial.runner(self.ledger).status(cluster).fits
        for r in replicas:
            self.ledger.charge(r.cluster, r.charges_by_pool())
        return fits

    def _move(self, trial: Demand, cluster: Cluster, leaving: Sequence[ModelReplica]) -> list[Move] | None:
        """`leaving` make room for one replica of `trial` on `cluster`: applied, or None (nothing changed).

        The room is claimed first, so the successors, placed while their predecessors still hold
        their nodes (make-before-break), cannot take back the very room the move frees.
        """
        for r in leaving:
            self.ledger.charge(r.cluster, r.charges_by_pool(), sign=-1)
        placed = trial.place(self.ledger, [cluster], {}).placements
        if not placed:  # the runner said it fits: the same bind cannot disagree, but nothing is lost if it does
            for r in leaving:
                self.ledger.charge(r.cluster, r.charges_by_pool())
            return None
        room = cost_by_pool(placed[0].options)
        extra = beyond_held(room, leaving)
        # While the successors are placed: the leaving replicas hold their nodes, the room the rest of them.
        self.ledger.charge(cluster.name, room, sign=-1)
        for r in leaving:
            self.ledger.charge(r.cluster, r.charges_by_pool())
        self.ledger.charge(cluster.name, extra)
        steps: list[_Step] = []
        for r in leaving:
            step = self._vacate(r, trial.stated)
            if step is None:
                for done in reversed(steps):
                    self._restore(done)
                self.ledger.charge(cluster.name, extra, sign=-1)
                return None
            steps.append(step)
        # Then they leave and the blocked replica takes the room.
        self.ledger.charge(cluster.name, extra, sign=-1)
        for r in leaving:
            self.ledger.charge(r.cluster, r.charges_by_pool(), sign=-1)
        self.ledger.charge(cluster.name, room)
        held = tuple(sorted(extra.items()))
        return [self._commit(step, trial.stated, held) for step in steps]

    def _vacate(self, replica: ModelReplica, demand: StatedDemand) -> _Step | None:
        """Place `replica`'s successor if its deployment would run short; the replica still holds its nodes.

        Where no successor can be placed (or its deployment may not move), `demand` may still evict it
        (policy.py): it then leaves without one, and its team's use drops by what it holds.
        """
        owner = self.by_key[_owner(replica)]
        staying = [r for r in self.live if _owner(r) == _owner(replica) and r.name not in self.moving]
        successor: Placement | None = None
        evicted = ""
        movable = owner.movable and replica.ready  # a replica that is not Ready is never moved
        if len(staying) + self.successors[_owner(replica)] <= owner.replicas:
            spread = Counter(r.cluster for r in staying if r.name != replica.name)
            placed = self.trial(owner).place(self.ledger, self.clusters, spread).placements if movable else ()
            if placed:
                successor = placed[0]
                self.successors[_owner(replica)] += 1
            else:
                evicted = self._eviction(demand, replica) or ""
                if not evicted:
                    return None
        elif not movable:
            evicted = self._eviction(demand, replica) or ""
            if not evicted:
                return None
        if evicted:
            cluster = self.by_cluster[replica.cluster]
            self.policy.release(replica.namespace, cluster, replica.charges_by_pool(), self.use)
        self.moving.add(replica.name)
        return _Step(replica=replica, successor=successor, evicted=evicted)

    def _restore(self, step: _Step) -> None:
        """Undo a vacate: the replica stays, its successor goes (the replica's nodes were never given back)."""
        replica = step.replica
        self.moving.discard(replica.name)
        if step.successor is not None:
            self.ledger.charge(step.successor.cluster.name, cost_by_pool(step.successor.options), sign=-1)
            self.successors[_owner(replica)] -= 1
        if step.evicted:
            cluster = self.by_cluster[replica.cluster]
            self.policy.release(replica.namespace, cluster, replica.charges_by_pool(), self.use, sign=1)

    @staticmethod
    def _commit(step: _Step, demand: StatedDemand, room: tuple[tuple[str, PoolCharge], ...]) -> Move:
        replica = step.replica
        pools = tuple(sorted(p for p, n in replica.node_cost_by_pool().items() if n))
        return Move(
            replica=replica,
            demand=demand.subject,
            cluster=replica.cluster,
            pools=pools,
            room=room,
            evicted=step.evicted,
        )


def _on_shared_pool(cluster: Cluster, leaving: Sequence[ModelReplica]) -> bool:
    """Whether any of `leaving` holds devices of a shared pool (`packing: Devices`) of `cluster`.

    Room made by several replicas leaving a shared pool does not hold still: each owner's reconcile
    works the moves out again on a fleet its successor has changed, where a pool's pods of several
    sizes fit other room, so successors and leavers can trade places round after round while the
    blocked replica never fits (measured: one deployment moving twenty times in a settle).
    """
    shared = {p.name for p in cluster.pools if shares_devices(p)}
    return any(pool in shared for r in leaving for pool, charge in r.charges_by_pool().items() if charge.groups)


def beyond_held(room: Mapping[str, PoolCharge], leaving: Sequence[ModelReplica]) -> dict[str, PoolCharge]:
    """What `room` takes beyond the nodes `leaving` hold now: the free room a move keeps from others."""
    held: dict[str, PoolCharge] = {}
    for r in leaving:
        for pool, charge in r.charges_by_pool().items():
            held[pool] = held[pool] + charge if pool in held else charge
    return {pool: charge.beyond(held.get(pool)) for pool, charge in room.items()}


@dataclass(frozen=True, slots=True, kw_only=True)
class _Step:
    """One replica vacated on the trial fleet: undone unless the whole make-room works."""

    replica: ModelReplica
    successor: Placement | None
    evicted: str = ""  # policy.REASON_RECLAIMED or REASON_PREEMPTED: it leaves without a successor
