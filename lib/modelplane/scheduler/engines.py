"""Which pools of a cluster can host each engine of the deployment, and at what node cost.

An engine goes on ONE pool: every member must match there (a member without device requests
matches any pool and rides along claimless), and at least one member must resolve a DRA device.
Where the cluster declares pools that share an interconnect fabric, the engine's members may also
span them, each member on one pool of the fabric (its pods share a PodSpec, so one pool each); never
pools without a shared fabric, across which a gang's collective cannot form. Such an option comes
after the single-pool ones of equal penalty (fit.py).
The engine's cost on a pool is pods x copies of each member that resolves a DRA device. Options
are computed once per (engine, pool name, pool content, packing) per schedule() call; capacity changes
between rounds never change them.
"""

from __future__ import annotations

import itertools
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TypeAlias

from modelplane.devices import DeviceMatcher
from modelplane.devices.quantity import QuantityError, parse_quantity
from modelplane.model import (
    ClaimKind,
    Cluster,
    Deployment,
    Device,
    Engine,
    Fabric,
    NodePool,
    PoolCharge,
    PoolPacking,
    ResolvedDeviceRequest,
    engine_charge,
)
from modelplane.scheduler.capacity import shares_devices


@dataclass(frozen=True, slots=True, kw_only=True)
class EngineOption:
    """One engine on one pool: its node cost, each member's resolved DRA requests (spec order) and
    what else the nodes it holds carry (packing.py weighs it)."""

    pool: str
    cost: int
    requests: tuple[tuple[ResolvedDeviceRequest, ...], ...]
    charge: PoolCharge = field(default_factory=PoolCharge)  # what it holds there: nodes, and pods as device groups
    claimed: int = 0  # DRA devices the engine's pods claim
    idle: int = 0  # DRA devices left unclaimed on the nodes it holds
    spare: int = 0  # Synthetic device kinds (a NIC) on those nodes that the engine does not ask for, per node
    size: Fraction = Fraction(0)  # the capacities of the pool's claimed device kinds, summed per device
    # An option spanning pools of a fabric: each member's pool (spec order), and what it holds per pool
    # (`pool` is then the first claiming member's, `charge` the sum); empty for a single-pool option.
    member_pools: tuple[str, ...] = ()
    split: tuple[tuple[str, PoolCharge], ...] = ()
    fabric: Fabric | None = None

    def pool_charges(self) -> tuple[tuple[str, PoolCharge], ...]:
        """What the option holds per pool."""
        return self.split or ((self.pool, self.charge),)

    def pool_of(self, member: int) -> str:
        return self.member_pools[member] if self.member_pools else self.pool


# Per engine in spec order: the pools that can host it, sorted by pool name.
ClusterOptions: TypeAlias = tuple[tuple[EngineOption, ...], ...]


class EngineSource(ABC):
    """Where filters, scores and bind read a deployment's engine options: matched from its spec
    (EngineOptions) or read from its statement (demand.StatedOptions). Both answer `of` once per
    cluster for the call; what is derived from it is derived here."""

    def __init__(self) -> None:
        self._matching: dict[str, frozenset[str]] = {}

    @abstractmethod
    def of(self, cluster: Cluster) -> ClusterOptions: ...

    @abstractmethod
    def unmatched(self, cluster: Cluster, engine_index: int) -> str: ...

    def on_pool(self, cluster: Cluster, engine_index: int, pool: str) -> EngineOption | None:
        """The option for one engine on one named pool, if the pool can host it."""
        return next((o for o in self.of(cluster)[engine_index] if o.pool == pool and not o.split), None)

    def on_pools(self, cluster: Cluster, engine_index: int, member_pools: tuple[str, ...]) -> EngineOption | None:
        """The option for one engine with each member (spec order) on the named pools, if they can host it."""
        if len(set(member_pools)) == 1:
            return self.on_pool(cluster, engine_index, member_pools[0])
        return next((o for o in self.of(cluster)[engine_index] if o.member_pools == member_pools), None)

    def matching_pools(self, cluster: Cluster) -> frozenset[str]:
        """Pools that can host at least one engine: the cluster's capacity relevant to this deployment."""
        pools = self._matching.get(cluster.name)
        if pools is None:
            pools = frozenset(p for opts in self.of(cluster) for o in opts for p, _ in o.pool_charges())
            self._matching[cluster.name] = pools
        return pools


def engine_option(
    matcher: DeviceMatcher, engine: Engine, pool: NodePool, *, exclusive: bool = False
) -> EngineOption | None:
    """The engine on `pool`, or None when a member does not match or nothing resolves a DRA device.

    `exclusive`: the deployment holds whole nodes (capacity.py), so on a shared pool too the devices
    its pods leave unclaimed idle.
    """
    return spanning_option(matcher, engine, (pool,) * len(engine.members), exclusive=exclusive)


def spanning_option(
    matcher: DeviceMatcher,
    engine: Engine,
    pools: tuple[NodePool, ...],
    *,
    exclusive: bool = False,
    fabric: Fabric | None = None,
) -> EngineOption | None:
    """The engine with member i on pools[i] (one pool, or pools of `fabric`), or None as engine_option."""
    requests: list[tuple[ResolvedDeviceRequest, ...]] = []
    cost = claimed = 0
    synthetic_requests: dict[str, int] = {}
    claiming: dict[str, list[tuple[int, int]]] = {}
    for member, pool in zip(engine.members, pools, strict=True):
        match = matcher.match_member(member, pool)
        if match is None:
            return None
        requests.append(match.resolved)
        unresolved = len(member.device_requests) - len(match.resolved)
        synthetic_requests[pool.name] = max(synthetic_requests.get(pool.name, 0), unresolved)
        if match.resolved:
            pods = member.pods_per_copy * engine.copies
            devices = sum(r.count for r in match.resolved)
            cost += pods
            claimed += pods * devices
            claiming.setdefault(pool.name, []).append((member.pods_per_copy, devices))
    if cost == 0:
        return None
    by_name = {p.name: p for p in pools}
    idle = spare = 0
    size = Fraction(0)
    classes = {r.device_class_name for member in requests for r in member}
    for name, members in claiming.items():
        pool = by_name[name]
        dra = [d for d in pool.devices if d.claim is ClaimKind.DRA and d.count > 0]
        pods = sum(p for p, _ in members) * engine.copies
        held = sum(p * d for p, d in members) * engine.copies
        # on a shared pool other replicas' pods use the rest of a node's devices
        idle += 0 if shares_devices(pool) and not exclusive else max(pods * sum(d.count for d in dra) - held, 0)
        synthetic = sum(1 for d in pool.devices if d.claim is ClaimKind.SYNTHETIC and d.count > 0)
        spare = max(spare, synthetic - synthetic_requests.get(name, 0))
        size = max(size, max((_size(d) for d in dra if d.device_class_name in classes), default=Fraction(0)))
    charges = {name: engine_charge(engine.copies, tuple(m), whole=exclusive) for name, m in claiming.items()}
    first = next(iter(claiming))
    spans = len({p.name for p in pools}) > 1
    total = PoolCharge()
    for charge in charges.values():
        total += charge
    return EngineOption(
        pool=first,
        cost=cost,
        requests=tuple(requests),
        charge=total,
        claimed=claimed,
        idle=idle,
        spare=spare,
        size=size,
        member_pools=tuple(p.name for p in pools) if spans else (),
        split=tuple(sorted(charges.items())) if spans else (),
        fabric=fabric if spans else None,
    )


def _size(device: Device) -> Fraction:
    """A device's capacities summed (memory dominates): larger devices are worth keeping for larger models."""
    total = Fraction(0)
    for value in device.capacity.values():
        try:
            total += parse_quantity(value)
        except QuantityError:  # published capacities are checked at the edge; an odd one just weighs nothing
            continue
    return total


class EngineOptions(EngineSource):
    """Memoised engine options per cluster for one deployment.

    An engine's option on a pool depends only on the pool's name, device content and packing, and
    fleets repeat them (the same GPU pool in every cluster of a region), so options are also shared
    across clusters: EngineOption is immutable.
    """

    def __init__(self, deployment: Deployment, matcher: DeviceMatcher) -> None:
        super().__init__()
        self._deployment = deployment
        self._matcher = matcher
        self._by_cluster: dict[str, ClusterOptions] = {}
        self._by_pool: dict[tuple[int, int, str, PoolPacking], EngineOption | None] = {}

    def of(self, cluster: Cluster) -> ClusterOptions:
        cached = self._by_cluster.get(cluster.name)
        if cached is None:
            pools = sorted(cluster.pools, key=lambda p: p.name)
            cached = tuple(
                (
                    *(opt for pool in pools if (opt := self._on(index, engine, pool)) is not None),
                    *self._spanning(engine, cluster),
                )
                for index, engine in enumerate(self._deployment.engines)
            )
            self._by_cluster[cluster.name] = cached
        return cached

    def _spanning(self, engine: Engine, cluster: Cluster) -> tuple[EngineOption, ...]:
        """The engine with its members on several pools of one fabric, every such assignment in pool order."""
        if len(engine.members) < 2 or not cluster.fabrics:  # noqa: PLR2004 - one member has nothing to span
            return ()
        by_name = {p.name: p for p in cluster.pools}
        out: list[EngineOption] = []
        for fabric in cluster.fabrics:
            pools = [by_name[n] for n in fabric.pools if n in by_name]
            for chosen in itertools.product(pools, repeat=len(engine.members)):
                if len({p.name for p in chosen}) < 2:  # noqa: PLR2004 - one pool: the single-pool options
                    continue
                option = spanning_option(
                    self._matcher, engine, chosen, exclusive=self._deployment.exclusive_nodes, fabric=fabric
                )
                if option is not None:
                    out.append(option)
        return tuple(out)

    def _on(self, index: int, engine: Engine, pool: NodePool) -> EngineOption | None:
        # Everything engine_option reads of the pool: its name, its device content and its packing (a
        # shared pool leaves no device idle), else the first pool seen would decide for the others.
        key = (index, self._matcher.pool_kinds(pool)[1], pool.name, pool.packing)
        if key in self._by_pool:
            return self._by_pool[key]
        option = self._by_pool[key] = engine_option(
            self._matcher, engine, pool, exclusive=self._deployment.exclusive_nodes
        )
        return option

    def unmatched(self, cluster: Cluster, engine_index: int) -> str:
        """Why no pool of the cluster hosts the engine: the first request no device serves, and why."""
        engine = self._deployment.engines[engine_index]
        for member in engine.members:
            for request in member.device_requests:
                reason = self._matcher.unmatched(request, cluster.pools)
                if reason is not None:
                    return f"member {member.role.value} device request {request.name}: {reason}"
        return "no single pool satisfies every member's devices together"


def cost_by_pool(options: tuple[EngineOption, ...]) -> Mapping[str, PoolCharge]:
    """What a replica holds per pool when its engines take `options`."""
    cost: dict[str, PoolCharge] = {}
    for opt in options:
        for pool, charge in opt.pool_charges():
            cost[pool] = cost[pool] + charge if pool in cost else charge
    return cost
