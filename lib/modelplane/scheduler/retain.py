"""Sticky retention: an observed replica keeps its (cluster, index) and pools while they still work.

A replica is kept when its cluster still exists, admits the namespace, matches clusterSelector
and carries no untolerated NoExecute taint; its engines and members still line up with the spec
(engines by name, members by role); each engine's pinned pool (or pools sharing a fabric) still exists and hosts the
engine under the current nodeSelector; and, when its node cost grew, the pinned pools can hold
the increase; its cluster is Ready. A namespace whose admission cannot be decided (its labels
unknown) does not evict, and a kept replica never moves. Every other replica leaves desired
state with one of the short reasons below and is placed afresh. A replica on a cluster whose
InferenceCluster cannot be read is `held`: kept exactly as observed, since nothing can be checked.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from modelplane.model import Cluster, Deployment, ModelReplica, PoolCharge, TaintEffect
from modelplane.scheduler.engines import EngineOption, EngineOptions, cost_by_pool
from modelplane.scheduler.ledger import Ledger
from modelplane.scheduler.selectors import admits_namespace, selector_matches, untolerated_taints

REASON_SCALED_DOWN = "scaled down"
REASON_CLUSTER_DELETED = "cluster deleted"
REASON_CLUSTER_NOT_READY = "cluster not Ready"
REASON_NAMESPACE_NOT_ADMITTED = "namespace no longer admitted"
REASON_SELECTOR_MISMATCH = "cluster no longer matches clusterSelector"
REASON_NO_EXECUTE_TAINT = "untolerated NoExecute taint"
REASON_SHAPE_CHANGED = "engine shape changed"
REASON_ENGINE_SPLIT = "engine split across pools"
REASON_POOL_REMOVED = "pool removed"
REASON_POOL_MISMATCH = "pool no longer satisfies nodeSelector"
REASON_POOL_FULL = "pool cannot hold the grown replica"
REASON_DUPLICATE = "duplicate replica index"
REASON_MAKING_ROOM = "making room for another deployment"  # scheduler/displace.py
REASON_RECLAIMED = "reclaimed for a team within its fleet quota guarantee"  # scheduler/policy.py
REASON_PREEMPTED = "preempted by higher-priority demand"  # scheduler/policy.py
EVICTED = frozenset({REASON_RECLAIMED, REASON_PREEMPTED})  # they leave without a successor

_NO_EXECUTE = frozenset({TaintEffect.NO_EXECUTE})


@dataclass(frozen=True, slots=True, kw_only=True)
class Kept:
    """An observed replica that passed the spec checks, with its engines re-resolved on their pools."""

    observed: ModelReplica
    cluster: Cluster
    options: tuple[EngineOption, ...]  # per engine, spec order; empty when held
    held: bool = False  # on an unreadable cluster: kept as observed, charged nothing


def hold(observed: ModelReplica) -> Kept:
    """A replica kept as observed on a cluster that cannot be read (a stand-in cluster of that name)."""
    return Kept(observed=observed, cluster=Cluster(name=observed.cluster), options=(), held=True)


def pinned_options(
    deployment: Deployment, cluster: Cluster | None, observed: ModelReplica, engines: EngineOptions
) -> tuple[EngineOption, ...] | str:
    """The observed replica's engines on their pinned pools under the current spec, or why not."""
    if cluster is None:
        return REASON_CLUSTER_DELETED
    if not cluster.ready:
        # Already unavailable: its successor is placed elsewhere now; it leaves once that one is
        # Ready, or at once when it is not Ready itself (modelplane.rollout.step).
        return REASON_CLUSTER_NOT_READY
    if admits_namespace(cluster, deployment.namespace, deployment.namespace_labels) is False:
        return REASON_NAMESPACE_NOT_ADMITTED
    if deployment.cluster_selector is not None and not selector_matches(deployment.cluster_selector, cluster.labels):
        return REASON_SELECTOR_MISMATCH
    if untolerated_taints(cluster.taints, deployment.tolerations, _NO_EXECUTE):
        return REASON_NO_EXECUTE_TAINT
    placed = {e.name: e for e in observed.engines}
    if len(placed) != len(observed.engines) or set(placed) != {e.name for e in deployment.engines}:
        return REASON_SHAPE_CHANGED
    pool_names = {p.name for p in cluster.pools}
    options: list[EngineOption] = []
    for i, engine in enumerate(deployment.engines):
        members = placed[engine.name].members
        if sorted(m.role for m in members) != sorted(m.role for m in engine.members):
            return REASON_SHAPE_CHANGED
        by_role = {m.role: m.pool for m in members}
        member_pools = tuple(by_role[m.role] for m in engine.members)  # spec order
        pools = frozenset(member_pools)
        if len(pools) != 1 and cluster.fabric_of(pools) is None:
            return REASON_ENGINE_SPLIT
        if not pools <= pool_names:
            return REASON_POOL_REMOVED
        option = engines.on_pools(cluster, i, member_pools)
        if option is None:
            return REASON_POOL_MISMATCH
        options.append(option)
    return tuple(options)


def charge_kept(ledger: Ledger, kept: Sequence[Kept]) -> tuple[list[Kept], list[tuple[Kept, str]]]:
    """Charge kept replicas to the ledger; drop those whose grown cost their pools cannot hold.

    Every replica first holds the smaller of its old and new cost per pool, so shrinking replicas
    free room before any growth is judged; growth is then granted in (cluster, index) order.
    """
    holding = [k for k in kept if k.held]
    kept = [k for k in kept if not k.held]
    olds: list[Mapping[str, PoolCharge]] = [k.observed.charges_by_pool() for k in kept]
    news: list[Mapping[str, PoolCharge]] = [cost_by_pool(k.options) for k in kept]
    floors = [overlap(old, new) for old, new in zip(olds, news, strict=True)]
    for k, floor in zip(kept, floors, strict=True):
        ledger.charge(k.cluster.name, floor)
    staying: list[Kept] = list(holding)
    dropped: list[tuple[Kept, str]] = []
    for k, new, floor in zip(kept, news, floors, strict=True):
        growth = {pool: g for pool, charge in new.items() if (g := _minus(charge, floor.get(pool))) != PoolCharge()}
        if ledger.fits(k.cluster.name, growth):
            ledger.charge(k.cluster.name, growth)
            staying.append(k)
        else:
            ledger.charge(k.cluster.name, floor, sign=-1)
            dropped.append((k, REASON_POOL_FULL))
    return staying, dropped


def overlap(old: Mapping[str, PoolCharge], new: Mapping[str, PoolCharge]) -> dict[str, PoolCharge]:
    """Per pool, what the replica holds both before and after: the smaller node count, the common groups.

    It is also what running both at once costs beyond the larger of the two, which the ledger holds.
    """
    floor: dict[str, PoolCharge] = {}
    for pool, charge in new.items():
        was = old.get(pool, PoolCharge())
        if was.groups == charge.groups:  # the common case: same pods, kept cheap
            floor[pool] = PoolCharge(nodes=min(was.nodes, charge.nodes), groups=charge.groups)
            continue
        common = Counter(was.groups) & Counter(charge.groups)
        floor[pool] = PoolCharge(nodes=min(was.nodes, charge.nodes), groups=tuple(sorted(common.elements())))
    return floor


def _minus(charge: PoolCharge, floor: PoolCharge | None) -> PoolCharge:
    """What `charge` holds beyond `floor` (its growth)."""
    if floor is None:
        return charge
    if floor.groups == charge.groups:
        return PoolCharge(nodes=max(charge.nodes - floor.nodes, 0))
    rest = Counter(charge.groups) - Counter(floor.groups)
    return PoolCharge(nodes=max(charge.nodes - floor.nodes, 0), groups=tuple(sorted(rest.elements())))
