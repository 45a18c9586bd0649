"""The fleet's policy on one call: quotas, priorities and who may take GPUs from whom.

Built from platform-owned objects only (modelplane.quota): FleetQuotas, PriorityClass values and
the labels of Namespaces. Every deployment's reconcile builds the same policy from the same fleet,
so the ranking and the evictions it decides agree whichever deployment asks; only the owner of
a replica acts on them.

- Rank: the order contested room is served in. Demand of a team still within its guarantee for
  the GPUs it can use comes first (Kueue admits within nominal quota before borrowing), then
  higher priority, then more GPUs per replica, then the name.
- Limit: a team's new replicas never take its use of a kind past the quota's limit.
- Reclaim: demand within its team's guarantee that fits nowhere may take back GPUs another team
  borrowed (that team stays at or above its own guarantee).
- Preempt: demand of strictly higher priority may take a lower-priority replica's GPUs, when its
  quota allows it: within its own team, or also other teams' borrowed GPUs. Equal priority never
  preempts; a deployment outside every quota never preempts nor reclaims.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from modelplane.devices import DeviceMatcher, compile_selector
from modelplane.devices.cel import CelCompileError
from modelplane.model import Cluster, ModelReplica, NodePool, PoolCharge, PoolPacking
from modelplane.quota import FleetQuota, Preemption, PriorityClasses, QuotaResource, QuotaStanding
from modelplane.scheduler.selectors import selector_matches
from modelplane.stated import StatedDemand, pool_kind

REASON_RECLAIMED = "Reclaimed"
REASON_PREEMPTED = "Preempted"

Use = Counter[tuple[str, str]]  # (quota, resource) -> GPUs


@dataclass(frozen=True, slots=True)
class Shares:
    """Each quota's GPUs in use, by (quota, kind), and per GPU kind the pool kinds that have it."""

    use: Use
    kinds: Mapping[str, frozenset[str]]


@dataclass(slots=True)
class FleetPolicy:
    """Quotas and priorities over one fleet; per-pool GPU counts are worked out once per call."""

    quotas: Sequence[FleetQuota] = ()
    priorities: PriorityClasses = field(default_factory=PriorityClasses)
    # Namespace labels the platform set, by namespace (a namespace not here matches no selector)
    namespace_labels: Mapping[str, Mapping[str, str]] = field(default_factory=lambda: MappingProxyType({}))
    matcher: DeviceMatcher = field(default_factory=DeviceMatcher)
    _per_node: dict[tuple[str, str, str], int] = field(default_factory=dict[tuple[str, str, str], int])
    _of_namespace: dict[str, FleetQuota | None] = field(default_factory=dict[str, FleetQuota | None])
    _pools: dict[str, tuple[Cluster, dict[str, NodePool]]] = field(
        default_factory=dict[str, tuple[Cluster, dict[str, NodePool]]]
    )

    def __post_init__(self) -> None:
        self.quotas = tuple(sorted(self.quotas, key=lambda q: q.name))

    @property
    def active(self) -> bool:
        return bool(self.quotas)

    def quota_of(self, namespace: str) -> FleetQuota | None:
        """The first quota, by name, that selects `namespace`."""
        if namespace not in self._of_namespace:
            labels = self.namespace_labels.get(namespace)
            self._of_namespace[namespace] = next(
                (
                    q
                    for q in self.quotas
                    if namespace in q.namespaces
                    or (
                        q.namespace_selector is not None
                        and labels is not None
                        and selector_matches(q.namespace_selector, labels)
                    )
                ),
                None,
            )
        return self._of_namespace[namespace]

    def priority(self, demand: StatedDemand) -> int:
        return self.priorities.value(demand.priority_class)

    # GPUs

    def per_node(self, pool: NodePool, resource: QuotaResource) -> int:
        """Devices of `resource`'s kind on one node of `pool`; a selector that does not compile matches none."""
        key = (pool_kind(pool), resource.name, resource.selector)
        if key not in self._per_node:
            try:
                selector = compile_selector(resource.selector)
            except CelCompileError:
                self._per_node[key] = 0
            else:
                self._per_node[key] = sum(d.count for d in pool.devices if self.matcher.selector_matches(selector, d))
        return self._per_node[key]

    def gpus(self, cluster: Cluster, charges: Mapping[str, PoolCharge], resource: QuotaResource) -> int:
        """What `charges` on `cluster` cost in `resource`: whole nodes' devices, or the devices claimed."""
        cached = self._pools.get(cluster.name)
        if cached is None or cached[0] is not cluster:  # once per cluster: usage asks for every replica and kind
            cached = self._pools[cluster.name] = (cluster, {p.name: p for p in cluster.pools})
        pools = cached[1]
        total = 0
        for name, charge in charges.items():
            pool = pools.get(name)
            if pool is None:
                continue
            per_node = self.per_node(pool, resource)
            if not per_node:
                continue
            if pool.packing is PoolPacking.DEVICES:
                total += sum(g.pods * g.devices for g in charge.groups)
            else:
                total += charge.nodes * per_node
        return total

    def usage(self, clusters: Iterable[Cluster], replicas: Iterable[ModelReplica]) -> Use:
        """GPUs each quota's namespaces hold now, per kind (replicas being deleted hold nothing more)."""
        use: Use = Counter()
        if not self.quotas:
            return use
        by_name = {c.name: c for c in clusters}
        for r in replicas:
            quota = self.quota_of(r.namespace)
            cluster = by_name.get(r.cluster)
            if quota is None or cluster is None or r.deleting:
                continue
            charges = r.charges_by_pool()
            for resource in quota.resources:
                use[(quota.name, resource.name)] += self.gpus(cluster, charges, resource)
        return use

    def standing(self, namespace: str, use: Use) -> tuple[QuotaStanding, ...]:
        quota = self.quota_of(namespace)
        if quota is None:
            return ()
        return tuple(
            QuotaStanding(
                quota=quota.name,
                resource=r.name,
                guaranteed=r.guaranteed,
                used=use[(quota.name, r.name)],
                limit=r.limit,
            )
            for r in quota.resources
        )

    # Limit

    def over_limit(self, namespace: str, cluster: Cluster, charges: Mapping[str, PoolCharge], use: Use) -> str | None:
        """Why placing `charges` would take `namespace`'s quota past a limit (None when it would not)."""
        quota = self.quota_of(namespace)
        if quota is None:
            return None
        for r in quota.resources:
            if r.limit is None:
                continue
            cost = self.gpus(cluster, charges, r)
            used = use[(quota.name, r.name)]
            if cost and used + cost > r.limit:
                return f"FleetQuota {quota.name} {r.name}: {used} of {r.limit} GPUs used, a replica here needs {cost}"
        return None

    # Rank

    def within_guarantee(self, demand: StatedDemand, use: Use, kinds: Mapping[str, frozenset[str]]) -> bool:
        """Whether `demand`'s team has guaranteed GPUs unused of a kind its pools offer.

        `kinds` maps each resource name to the pool kinds (stated.pool_kind) that have its devices.
        """
        quota = self.quota_of(demand.namespace)
        if quota is None:
            return False
        offered = {o.kind for e in demand.engines for o in e.options}
        return any(
            use[(quota.name, r.name)] < r.guaranteed and not offered.isdisjoint(kinds.get(r.name, frozenset()))
            for r in quota.resources
        )

    def shares(self, clusters: Sequence[Cluster], replicas: Iterable[ModelReplica]) -> Shares:
        """What ranking reads of the fleet: each quota's use, and the pool kinds with each GPU kind."""
        kinds = self.resource_kinds(clusters) if self.active else {}
        return Shares(use=self.usage(clusters, replicas), kinds=MappingProxyType(kinds))

    def resource_kinds(self, clusters: Iterable[Cluster]) -> dict[str, frozenset[str]]:
        """Per resource name of every quota, the pool kinds of the fleet that have its devices."""
        out: dict[str, set[str]] = {}
        for cluster in clusters:
            for pool in cluster.pools:
                for quota in self.quotas:
                    for r in quota.resources:
                        if self.per_node(pool, r):
                            out.setdefault(r.name, set()).add(pool_kind(pool))
        return {name: frozenset(kinds) for name, kinds in out.items()}

    # Evict

    def eviction(
        self,
        blocked: StatedDemand,
        victim: StatedDemand,
        *,
        victim_cluster: Cluster,
        victim_charges: Mapping[str, PoolCharge],
        use: Use,
        kinds: Mapping[str, frozenset[str]],
    ) -> str | None:
        """REASON_RECLAIMED or REASON_PREEMPTED when `blocked` may take the victim replica's GPUs, else None."""
        mine = self.quota_of(blocked.namespace)
        if mine is None or victim.key == blocked.key:
            return None
        theirs = self.quota_of(victim.namespace)
        same_team = theirs is not None and theirs.name == mine.name
        if (
            not same_team
            and self.within_guarantee(blocked, use, kinds)
            and self._borrowing(theirs, victim_cluster, victim_charges, use)
        ):
            return REASON_RECLAIMED
        if mine.preemption is Preemption.NEVER or self.priority(blocked) <= self.priority(victim):
            return None
        if same_team:
            return REASON_PREEMPTED
        if mine.preemption is Preemption.ANY and self._borrowing(theirs, victim_cluster, victim_charges, use):
            return REASON_PREEMPTED
        return None

    def _borrowing(
        self, quota: FleetQuota | None, cluster: Cluster, charges: Mapping[str, PoolCharge], use: Use
    ) -> bool:
        """Whether the replica's GPUs are borrowed: its team stays at or above its guarantee without them.

        A namespace outside every quota is guaranteed nothing, so all it holds is borrowed.
        """
        if quota is None:
            return True
        return all(
            use[(quota.name, r.name)] - cost >= r.guaranteed
            for r in quota.resources
            if (cost := self.gpus(cluster, charges, r))
        )

    def release(
        self, namespace: str, cluster: Cluster, charges: Mapping[str, PoolCharge], use: Use, *, sign: int = -1
    ) -> int:
        """Take a replica's GPUs off (sign=1: add them to) its team's use; the GPUs moved, over every kind."""
        quota = self.quota_of(namespace)
        if quota is None:
            return 0
        moved = 0
        for r in quota.resources:
            gpus = self.gpus(cluster, charges, r)
            use[(quota.name, r.name)] += sign * gpus
            moved += gpus
        return moved
