"""Cluster filters: named pure predicates, evaluated in a fixed order; the first failure is final.

Each filter returns a Status whose reason is an aggregatable plural phrase (the histogram key in
Diagnosis.summary()) and whose detail names the specifics. Only the capacity filter reads the
ledger; the others depend on the deployment and the cluster alone, so their verdicts hold for a
whole schedule() call (`uses_ledger` tells the orchestrator what it may cache).

Placement stops at a cluster's first failure. To explain a rejection, `FilterRunner.failures`
also runs the filters after it, so a tainted cluster whose devices would not match either says
both; a filter that `needs` an earlier one (capacity needs the device options) is skipped when
that one failed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

from modelplane.cache import VOLUME_NAMESPACE
from modelplane.model import CACHE_READY, Cluster, Deployment, TaintEffect, kserve_rendered_as
from modelplane.scheduler import kai, stack
from modelplane.scheduler.capacity import DeviceCapacity
from modelplane.scheduler.engines import EngineOption, EngineSource
from modelplane.scheduler.fit import assign, shortfall
from modelplane.scheduler.ledger import Ledger
from modelplane.scheduler.limit import REASON_QUOTA_EXCEEDED, QuotaGate
from modelplane.scheduler.packing import Packing, Penalty
from modelplane.scheduler.result import FIT, MODEL_CACHE, NODE_CAPACITY, Code, Status
from modelplane.scheduler.scarcity import Scarcity
from modelplane.scheduler.selectors import (
    admits_namespace,
    format_taint,
    selector_matches,
    selector_mismatch,
    untolerated_taints,
)

REASON_NOT_READY = "had Ready=False"  # reads right for 1 and for many
REASON_NAMESPACE_NOT_ADMITTED = "did not admit the namespace"
REASON_KAI_NOT_ALLOWED = "did not let the namespace use its queue or priority class"
REASON_SELECTOR_MISMATCH = "did not match clusterSelector"
REASON_UNTOLERATED_TAINTS = "had untolerated taints"
REASON_STACK_NOT_RENDERED = "had stack Dynamo, whose multi-node engines are not rendered here"
REASON_NO_MATCHING_POOL = "had no pool matching an engine's devices"
REASON_NO_CAPACITY = "had no pool with enough free nodes"
REASON_UNREADABLE_REPLICA = "held a ModelReplica that cannot be read"
REASON_NO_EXCLUSIVE_NODES = "could not keep other deployments off exclusive nodes"
# The KServe minor whose pods carry no labels of ours (render/llmis.py): no anti-affinity can tell deployments apart.
KSERVE_UNLABELLED = "0.16"
REASON_NO_MODEL_CACHE = "had no Ready copy of the ModelCache"

SCHEDULING_EFFECTS = frozenset({TaintEffect.NO_SCHEDULE, TaintEffect.NO_EXECUTE})


class Context:
    """What filters, scorers and bind read for one deployment: device options and the ledger.

    The pool assignment per cluster is memoised against the cluster's ledger version, so a
    cluster is re-fitted only after something was charged to it.
    """

    def __init__(
        self,
        deployment: Deployment,
        engines: EngineSource,
        ledger: Ledger,
        *,
        unreadable_replicas: Mapping[str, str] | None = None,
        packing: Packing | None = None,
        quota: QuotaGate | None = None,
        scarcity: Scarcity | None = None,
    ) -> None:
        self.deployment = deployment
        self.packing = packing
        self.quota = quota  # the fleet quota's limit on new replicas (limit.py); None: no limit
        self.scarcity = scarcity
        self.engines = engines
        self.ledger = ledger
        # cluster -> a ModelReplica on it that cannot be read: its free nodes are not known
        self.unreadable_replicas: Mapping[str, str] = unreadable_replicas or {}
        self._fits: dict[str, tuple[tuple[int, int], tuple[EngineOption, ...] | None]] = {}
        self._free: dict[str, tuple[int, int]] = {}

    def assignment(self, cluster: Cluster) -> tuple[EngineOption, ...] | None:
        """One pool per engine that fits the cluster's free nodes now, or None."""
        version = (self.ledger.version(cluster.name), self.quota.generation if self.quota is not None else 0)
        cached = self._fits.get(cluster.name)
        if cached is None or cached[0] != version:
            order = None if self.packing is None else self._order(cluster)
            options = self.engines.of(cluster)
            if self.quota is not None:  # each engine's pools within the limit, then the whole replica
                gate = self.quota
                options = tuple(tuple(o for o in opts if gate.over(cluster, (o,)) is None) for opts in options)
            found = assign(options, self.ledger.view(cluster.name), order)
            if found is not None and self.quota is not None and self.quota.over(cluster, found) is not None:
                found = None
            cached = (version, found)
            self._fits[cluster.name] = cached
        return cached[1]

    def over_quota(self, cluster: Cluster) -> str | None:
        """Why the cluster has room but not within the fleet quota's limit (None when that is not why)."""
        if self.quota is None:
            return None
        found = assign(self.engines.of(cluster), self.ledger.view(cluster.name))
        return None if found is None else self.quota.over(cluster, found) or self._first_over(cluster)

    def _first_over(self, cluster: Cluster) -> str | None:
        gate = self.quota
        assert gate is not None  # only called with a gate
        return next((why for opts in self.engines.of(cluster) for o in opts if (why := gate.over(cluster, (o,)))), None)

    def _order(self, cluster: Cluster) -> Callable[[int, EngineOption], int]:
        packing = self.packing
        assert packing is not None  # only called with a packing
        pools = self.ledger.view(cluster.name)
        return lambda engine, option: packing.on(engine, option, pools).total + self._scarce(cluster, option)

    def penalty(self, cluster: Cluster, options: tuple[EngineOption, ...]) -> Penalty:
        """The packing penalty of a replica taking `options` (engine i on options[i]); zero without packing."""
        total = Penalty()
        if self.packing is not None:
            pools = self.ledger.view(cluster.name)
            for engine, option in enumerate(options):
                total += self.packing.on(engine, option, pools)
                total += Penalty(scarce=self._scarce(cluster, option))
        return total

    def _scarce(self, cluster: Cluster, option: EngineOption) -> int:
        """What the option's devices (claimed and idled) cost other demand of the pool's kind.

        Nothing on a shared pool (packing: Devices): a pod there holds its devices, not whole nodes,
        and the benchmark's shared fleets lost more than they gained by it (0.96 of the
        device-granular optimum fell to 0.95 on medium fleets).
        """
        if self.scarcity is None or isinstance(self.ledger.view(cluster.name).get(option.pool), DeviceCapacity):
            return 0
        return self.scarcity.cost(cluster.name, option.pool, option.claimed + option.idle)

    def free_matching_nodes(self, cluster: Cluster) -> int:
        """Free nodes over the pools that can host some engine of the deployment."""
        version = self.ledger.version(cluster.name)
        cached = self._free.get(cluster.name)
        if cached is None or cached[0] != version:
            free = self.ledger.free(cluster.name)
            cached = (version, sum(max(free.get(p, 0), 0) for p in self.engines.matching_pools(cluster)))
            self._free[cluster.name] = cached
        return cached[1]


@dataclass(frozen=True, slots=True, kw_only=True)
class Filter:
    name: str
    check: Callable[[Context, Cluster], Status]
    uses_ledger: bool = False
    needs: str = ""  # a filter that must have passed for this one to mean anything


def _ready(_: Context, cluster: Cluster) -> Status:
    if cluster.ready:
        return FIT
    return Status(code=Code.UNSCHEDULABLE, reason=REASON_NOT_READY, detail="cluster is not Ready")


def _namespace_admitted(ctx: Context, cluster: Cluster) -> Status:
    dep = ctx.deployment
    admitted = admits_namespace(cluster, dep.namespace, dep.namespace_labels)
    if admitted:
        return FIT
    detail = f"namespace {dep.namespace} is not in allowedNamespaces or allowedNamespaceSelector"
    if admitted is None:
        detail = f"allowedNamespaceSelector needs the labels of namespace {dep.namespace}; its Namespace was not found"
    return Status(code=Code.UNRESOLVABLE, reason=REASON_NAMESPACE_NOT_ADMITTED, detail=detail)


def _kai_allowed(ctx: Context, cluster: Cluster) -> Status:
    dep = ctx.deployment
    problem = kai.refusal(
        cluster,
        dep.namespace,
        queue=dep.queue or kai.default_queue(cluster, dep.namespace),
        priority_class_name=dep.priority_class_name or cluster.default_priority_class_name,
    )
    if problem is None:
        return FIT
    return Status(code=Code.UNRESOLVABLE, reason=REASON_KAI_NOT_ALLOWED, detail=problem)


def _exclusive_nodes(ctx: Context, cluster: Cluster) -> Status:
    if not ctx.deployment.exclusive_nodes or kserve_rendered_as(cluster.kserve_version) != KSERVE_UNLABELLED:
        return FIT
    detail = (
        f"KServe {cluster.kserve_version} does not label the pods it creates, so no pod anti-affinity can tell "
        "deployments apart; exclusive nodes need KServe 0.17 or later"
    )
    return Status(code=Code.UNRESOLVABLE, reason=REASON_NO_EXCLUSIVE_NODES, detail=detail)


def _cluster_selector(ctx: Context, cluster: Cluster) -> Status:
    selector = ctx.deployment.cluster_selector
    if selector is None or selector_matches(selector, cluster.labels):
        return FIT
    return Status(
        code=Code.UNRESOLVABLE,
        reason=REASON_SELECTOR_MISMATCH,
        detail=selector_mismatch(selector, cluster.labels),
    )


def _taints_tolerated(ctx: Context, cluster: Cluster) -> Status:
    bad = untolerated_taints(cluster.taints, ctx.deployment.tolerations, SCHEDULING_EFFECTS)
    if not bad:
        return FIT
    taints = ", ".join(format_taint(t) for t in bad)
    return Status(code=Code.UNRESOLVABLE, reason=REASON_UNTOLERATED_TAINTS, detail=f"untolerated {taints}")


def _stack_supported(ctx: Context, cluster: Cluster) -> Status:
    problem = stack.refusal(cluster, ctx.deployment.engines)
    if problem is None:
        return FIT
    return Status(code=Code.UNRESOLVABLE, reason=REASON_STACK_NOT_RENDERED, detail=problem)


def _model_cache_staged(ctx: Context, cluster: Cluster) -> Status:
    """Whether the cluster holds a Ready copy of the deployment's ModelCache its pods can mount."""
    dep = ctx.deployment
    name = dep.model_cache
    cache = dep.cache
    if name is None:
        return FIT
    code = Code.UNRESOLVABLE
    if cache is None:
        detail = dep.cache_problem or f"ModelCache {dep.namespace}/{name} was not read"
    elif cache.cluster_selector is not None and not selector_matches(cache.cluster_selector, cluster.labels):
        detail = f"ModelCache {name} does not stage here: {selector_mismatch(cache.cluster_selector, cluster.labels)}"
    elif cluster.workload_namespace != VOLUME_NAMESPACE:
        detail = (
            f"ModelCache {name} stages its volume in namespace {VOLUME_NAMESPACE} and a pod mounts only a claim of "
            f"its own namespace; the cluster's workloadNamespace is {cluster.workload_namespace}"
        )
    elif cache.phases.get(cluster.name) != CACHE_READY:
        phase = cache.phases.get(cluster.name)
        code = Code.UNSCHEDULABLE  # hydration ends by itself
        detail = f"ModelCache {name} is {phase} here" if phase else f"ModelCache {name} reports no phase here yet"
    else:
        return FIT
    return Status(code=code, reason=REASON_NO_MODEL_CACHE, detail=detail)


def _pools_match_devices(ctx: Context, cluster: Cluster) -> Status:
    for index, (engine, opts) in enumerate(zip(ctx.deployment.engines, ctx.engines.of(cluster), strict=True)):
        if not opts:
            return Status(
                code=Code.UNRESOLVABLE,
                reason=REASON_NO_MATCHING_POOL,
                detail=f"engine {engine.name}: {ctx.engines.unmatched(cluster, index)}",
            )
    return FIT


def _replicas_readable(ctx: Context, cluster: Cluster) -> Status:
    problem = ctx.unreadable_replicas.get(cluster.name)
    if problem is None:
        return FIT
    return Status(code=Code.UNSCHEDULABLE, reason=REASON_UNREADABLE_REPLICA, detail=problem)


def _enough_free_nodes(ctx: Context, cluster: Cluster) -> Status:
    if ctx.assignment(cluster) is not None:
        return FIT
    over = ctx.over_quota(cluster)
    if over is not None:
        return Status(code=Code.UNSCHEDULABLE, reason=REASON_QUOTA_EXCEEDED, detail=over)
    detail = shortfall(ctx.deployment.engines, ctx.engines.of(cluster), ctx.ledger.view(cluster.name))
    return Status(code=Code.UNSCHEDULABLE, reason=REASON_NO_CAPACITY, detail=detail)


# The order is part of the contract: it decides which reason a rejected cluster reports.
FILTERS: tuple[Filter, ...] = (
    Filter(name="Ready", check=_ready),
    Filter(name="NamespaceAdmitted", check=_namespace_admitted),
    Filter(name="ClusterSelector", check=_cluster_selector),
    Filter(name="TaintToleration", check=_taints_tolerated),
    # after the selector and taints: a cluster the deployment would never use need not say what queues it allows
    Filter(name="KaiAllowed", check=_kai_allowed),
    Filter(name="StackSupported", check=_stack_supported),
    Filter(name="ExclusiveNodes", check=_exclusive_nodes),
    # after the selector: a cluster the deployment would never use need not say where its cache is
    Filter(name=MODEL_CACHE, check=_model_cache_staged),
    Filter(name="DeviceMatch", check=_pools_match_devices),
    Filter(name="ReplicasReadable", check=_replicas_readable),
    Filter(name=NODE_CAPACITY, check=_enough_free_nodes, uses_ledger=True, needs="DeviceMatch"),
)


class FilterRunner:
    """Runs FILTERS per cluster, caching the ledger-independent prefix for the whole call."""

    def __init__(
        self, ctx: Context, filters: tuple[Filter, ...] = FILTERS, *, static: dict[str, Status] | None = None
    ) -> None:
        """`static`, shared by runners of one deployment over several ledgers, holds the ledger-independent verdicts."""
        self._ctx = ctx
        self._static = tuple(f for f in filters if not f.uses_ledger)
        self._dynamic = tuple(f for f in filters if f.uses_ledger)
        if filters != self._static + self._dynamic:
            msg = "ledger-dependent filters must come after every ledger-independent one"
            raise ValueError(msg)
        self._static_status: dict[str, Status] = static if static is not None else {}

    def status(self, cluster: Cluster) -> Status:
        """The cluster's first failing filter, or FIT."""
        return self._first(cluster)

    def eligible(self, cluster: Cluster) -> bool:
        """Whether every ledger-independent filter passes: the cluster could host a replica given room."""
        status = self._static_status.get(cluster.name)
        if status is None:
            status = self._static_status[cluster.name] = _first_failure(self._static, self._ctx, cluster)
        return status.fits

    def _first(self, cluster: Cluster) -> Status:
        status = self._static_status.get(cluster.name)
        if status is None:
            status = _first_failure(self._static, self._ctx, cluster)
            self._static_status[cluster.name] = status
        if not status.fits:
            return status
        return _first_failure(self._dynamic, self._ctx, cluster)

    def failures(self, cluster: Cluster) -> Status:
        """The first failing filter with every later failing one in `also`; FIT when none fails."""
        first = self._first(cluster)
        if first.fits:
            return first
        filters = self._static + self._dynamic
        after = [f.name for f in filters].index(first.filter) + 1
        failed = {first.filter}
        later: list[Status] = []
        for f in filters[after:]:
            if f.needs in failed:
                continue
            status = _named(f, self._ctx, cluster)
            if not status.fits:
                failed.add(f.name)
                later.append(status)
        return replace(first, also=tuple(later))


def _named(f: Filter, ctx: Context, cluster: Cluster) -> Status:
    status = f.check(ctx, cluster)
    return status if status.fits else replace(status, filter=f.name)


def _first_failure(filters: tuple[Filter, ...], ctx: Context, cluster: Cluster) -> Status:
    for f in filters:
        status = _named(f, ctx, cluster)
        if not status.fits:
            return status
    return FIT
