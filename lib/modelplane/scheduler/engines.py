"""Which pools of a cluster can host each engine of the deployment, and at what node cost.

An engine goes on ONE pool: every member must match there (a member without device requests
matches any pool and rides along claimless), and at least one member must resolve a DRA device.
The engine's cost on a pool is pods x copies of each member that resolves a DRA device. Options
are computed once per (engine, pool name, pool content, packing) per schedule() call; capacity changes
between rounds never change them.
"""

from __future__ import annotations

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
        return next((o for o in self.of(cluster)[engine_index] if o.pool == pool), None)

    def matching_pools(self, cluster: Cluster) -> frozenset[str]:
        """Pools that can host at least one engine: the cluster's capacity relevant to this deployment."""
        pools = self._matching.get(cluster.name)
        if pools is None:
            pools = frozenset(o.pool for opts in self.of(cluster) for o in opts)
            self._matching[cluster.name] = pools
        return pools


def engine_option(
    matcher: DeviceMatcher, engine: Engine, pool: NodePool, *, exclusive: bool = False
) -> EngineOption | None:
    """The engine on `pool`, or None when a member does not match or nothing resolves a DRA device.

    `exclusive`: the deployment holds whole nodes (capacity.py), so on a shared pool too the devices
    its pods leave unclaimed idle.
    """
    requests: list[tuple[ResolvedDeviceRequest, ...]] = []
    cost = claimed = 0
    synthetic_requests = 0
    claiming: list[tuple[int, int]] = []
    for member in engine.members:
        match = matcher.match_member(member, pool)
        if match is None:
            return None
        requests.append(match.resolved)
        synthetic_requests = max(synthetic_requests, len(member.device_requests) - len(match.resolved))
        if match.resolved:
            pods = member.pods_per_copy * engine.copies
            devices = sum(r.count for r in match.resolved)
            cost += pods
            claimed += pods * devices
            claiming.append((member.pods_per_copy, devices))
    if cost == 0:
        return None
    shared = shares_devices(pool) and not exclusive
    dra = [d for d in pool.devices if d.claim is ClaimKind.DRA and d.count > 0]
    classes = {r.device_class_name for member in requests for r in member}
    synthetic = sum(1 for d in pool.devices if d.claim is ClaimKind.SYNTHETIC and d.count > 0)
    return EngineOption(
        pool=pool.name,
        cost=cost,
        requests=tuple(requests),
        charge=engine_charge(engine.copies, tuple(claiming), whole=exclusive),
        claimed=claimed,
        # on a shared pool other replicas' pods use the rest of a node's devices
        idle=0 if shared else max(cost * sum(d.count for d in dra) - claimed, 0),
        spare=max(synthetic - synthetic_requests, 0),
        size=max((_size(d) for d in dra if d.device_class_name in classes), default=Fraction(0)),
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
                tuple(opt for pool in pools if (opt := self._on(index, engine, pool)) is not None)
                for index, engine in enumerate(self._deployment.engines)
            )
            self._by_cluster[cluster.name] = cached
        return cached

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
        cost[opt.pool] = cost[opt.pool] + opt.charge if opt.pool in cost else opt.charge
    return cost
