"""Another deployment's stated demand played out on a ledger, by the same bind its own reconcile runs.

Held room (reserve.py), moves (displace.py) and the plan's blockers (fleet/gap.py) ask what a
deployment other than the one being scheduled could do on some ledger. They read only its
statement (modelplane.stated): the options it lists stand in for its engine options, and the
filters it could not state for the reader (readiness, capacity) run here on the reader's fleet.
Nothing of the other deployment's spec is compiled or evaluated, so a bad spec elsewhere cannot
fail this call. The statement is checked against the fleet as the reader sees it: a cluster or
pool kind it names that no pool has is ignored, and a cluster whose allowedNamespaces leaves the
owner's namespace out is never used, whatever the statement says, nor is one whose KAI rules do
not let that namespace use the priority class stated (a hand-written statement cannot raise its
own priority where its clusters refuse the class).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from modelplane.model import Cluster, Deployment, Engine, PlacedEngine, SpreadPolicy
from modelplane.scheduler import kai
from modelplane.scheduler.bind import BindOutcome, bind
from modelplane.scheduler.engines import ClusterOptions, EngineOption, EngineSource
from modelplane.scheduler.filters import Context, Filter, FilterRunner
from modelplane.scheduler.ledger import Ledger
from modelplane.scheduler.packing import Packing
from modelplane.scheduler.result import FIT, NODE_CAPACITY, Code, Status
from modelplane.scheduler.selectors import admits_namespace
from modelplane.stated import StatedDemand, StatedOption, pool_kind


def devices_claimed(engines: Iterable[Engine | PlacedEngine]) -> int:
    """Devices one replica claims: pods x copies x requested devices, over every member."""
    return sum(
        member.pods_per_copy * engine.copies * sum(r.count for r in member.device_requests)
        for engine in engines
        for member in engine.members
    )


class StatedOptions(EngineSource):
    """Engine options per cluster, read from a statement instead of matched from a spec."""

    def __init__(self, stated: StatedDemand) -> None:
        super().__init__()
        self._stated = stated
        self._listed = frozenset(stated.clusters)
        # engine index -> pool kind -> option, without a pool name: each cluster's pools of that kind get one
        self._kinds = tuple({o.kind: o for o in engine.options} for engine in stated.engines)
        self._by_cluster: dict[str, ClusterOptions] = {}

    def listed(self, cluster: Cluster) -> bool:
        """Whether the statement lets the deployment use `cluster`."""
        return (cluster.name in self._listed) != self._stated.all_but

    def of(self, cluster: Cluster) -> ClusterOptions:
        cached = self._by_cluster.get(cluster.name)
        if cached is None:
            cached = tuple(() for _ in self._kinds)
            if self.listed(cluster):
                pools = sorted(cluster.pools, key=lambda p: p.name)
                kinds = [(p.name, pool_kind(p)) for p in pools]
                cached = tuple(
                    tuple(_option(name, by_kind[kind]) for name, kind in kinds if kind in by_kind)
                    for by_kind in self._kinds
                )
            self._by_cluster[cluster.name] = cached
        return cached

    def unmatched(self, cluster: Cluster, engine_index: int) -> str:
        return f"the statement of {self._stated.subject} names no pool kind of {cluster.name} for engine {engine_index}"


def _option(pool: str, o: StatedOption) -> EngineOption:
    return EngineOption(
        pool=pool,
        cost=o.cost,
        requests=(),
        charge=o.charge,
        claimed=o.claimed,
        idle=o.idle,
        spare=o.spare,
        size=o.size,
    )


REASON_NOT_STATED = "were not usable by the stated demand"
REASON_NO_STATED_ROOM = "had no room for the stated demand"


def _usable(ctx: Context, cluster: Cluster) -> Status:
    engines = ctx.engines
    assert isinstance(engines, StatedOptions)  # only Demand builds these contexts
    d = ctx.deployment
    if (
        cluster.ready
        and engines.listed(cluster)
        and all(engines.of(cluster))
        and admits_namespace(cluster, d.namespace, None) is not False
        and (not d.priority_class_name or d.priority_class_name in kai.allowed_priority_classes(cluster, d.namespace))
    ):
        return FIT
    return Status(code=Code.UNRESOLVABLE, reason=REASON_NOT_STATED, detail=f"{cluster.name} is not usable")


def _room(ctx: Context, cluster: Cluster) -> Status:
    if ctx.assignment(cluster) is not None:
        return FIT
    return Status(code=Code.UNSCHEDULABLE, reason=REASON_NO_STATED_ROOM, detail=f"{cluster.name} is full")


STATED_FILTERS: tuple[Filter, ...] = (
    Filter(name="Stated", check=_usable),
    Filter(name=NODE_CAPACITY, check=_room, uses_ledger=True, needs="Stated"),
)


class Demand:
    """One deployment's stated demand, placed over any ledger as its own bind would place it."""

    def __init__(self, stated: StatedDemand) -> None:
        self.stated = stated
        self.engines = StatedOptions(stated)
        # The bind reads only identity and spread policy of the deployment; its engines are the statement's.
        self._deployment = Deployment(
            namespace=stated.namespace,
            name=stated.name,
            replicas=stated.replicas,
            engines=(),
            spread=SpreadPolicy.STRICT if stated.strict_spread else SpreadPolicy.PREFERRED,
            priority_class_name=stated.priority_class or None,
        )
        # Shared by every ledger the demand is placed on: neither depends on capacity.
        self._packing = Packing(self.engines)
        self._static: dict[str, Status] = {}

    def runner(self, ledger: Ledger) -> FilterRunner:
        return FilterRunner(self._context(ledger), STATED_FILTERS, static=self._static)

    def place(
        self, ledger: Ledger, clusters: Sequence[Cluster], spread: Mapping[str, int], *, count: int = 1
    ) -> BindOutcome:
        """Place up to `count` replicas on `ledger` (charged there), as the deployment's reconcile would."""
        ctx = self._context(ledger)
        runner = FilterRunner(ctx, STATED_FILTERS, static=self._static)
        return bind(ctx, runner, clusters=clusters, count=count, taken={}, replicas_on=spread, explain=False)

    def uses(self, cluster: Cluster, pool: str) -> bool:
        """Whether some engine can use `pool` of `cluster` (capacity and readiness aside)."""
        return pool in self.engines.matching_pools(cluster)

    def usable(self, clusters: Iterable[Cluster], runner: FilterRunner) -> set[tuple[str, str]]:
        """(cluster, pool) its engines can use, on the clusters that would take it but for capacity."""
        return {(c.name, p) for c in clusters if runner.eligible(c) for p in self.engines.matching_pools(c)}

    def _context(self, ledger: Ledger) -> Context:
        return Context(self._deployment, self.engines, ledger, packing=self._packing)
