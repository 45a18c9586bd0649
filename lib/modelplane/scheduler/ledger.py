"""The capacity ledger: what each (cluster, pool) can still be promised during one schedule() call.

Each pool starts empty (capacity.py: whole nodes for `packing: Nodes`, shared devices for
`packing: Devices`); every replica that stays in the fleet is charged what it holds, and each
placement is charged before the next one is considered, so one pass never overcommits a pool.
Charges against clusters or pools the fleet no longer publishes are ignored (nothing there to
hold). Observed state may already overcommit a pool (e.g. the pool shrank); such a pool then fits
nothing more.

A per-cluster version number changes on every charge, so callers can cache anything derived
from a cluster's capacity until that cluster is charged again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType

from modelplane.model import Cluster, ModelReplica, PoolCharge
from modelplane.scheduler.capacity import DeviceCapacity, PoolCapacity, capacities, take_all


class Ledger:
    """Capacity per (cluster, pool); mutated only through `charge`."""

    def __init__(self, clusters: Sequence[Cluster]) -> None:
        self._pools: dict[str, dict[str, PoolCapacity]] = {c.name: capacities(c.pools) for c in clusters}
        self._version: dict[str, int] = dict.fromkeys(self._pools, 0)

    def copy(self) -> Ledger:
        """An independent ledger in the same state, to try placements on."""
        other = Ledger(())
        other._pools = {c: {p: cap.copy() for p, cap in pools.items()} for c, pools in self._pools.items()}
        other._version = dict(self._version)
        return other

    def adopt(self, other: Ledger) -> None:
        """Take `other`'s state (a copy of this ledger charged further); every version moves on."""
        self._pools = other._pools
        self._version = {c: max(self._version.get(c, 0), v) + 1 for c, v in other._version.items()}

    def free(self, cluster: str) -> Mapping[str, int]:
        """Free whole nodes per pool of `cluster` (empty for an unknown cluster)."""
        return MappingProxyType({name: cap.free_nodes() for name, cap in self._pools.get(cluster, {}).items()})

    def view(self, cluster: str) -> Mapping[str, PoolCapacity]:
        """The cluster's pool capacities as they stand, to read only (copy them to try placements)."""
        return MappingProxyType(self._pools.get(cluster, {}))

    def pools(self, cluster: str) -> dict[str, PoolCapacity]:
        """A copy of the cluster's pool capacities to try placements on."""
        return {name: cap.copy() for name, cap in self._pools.get(cluster, {}).items()}

    def version(self, cluster: str) -> int:
        return self._version.get(cluster, 0)

    def fits(self, cluster: str, charges: Mapping[str, PoolCharge]) -> bool:
        """Whether every charge fits its pool (a charge on a pool the cluster lacks fits nowhere)."""
        pools = self._pools.get(cluster, {})
        return all(
            (charge.nodes <= 0 and not charge.groups) or (pool in pools and pools[pool].fits(charge))
            for pool, charge in charges.items()
        )

    def holds(self, cluster: str) -> bool:
        """Whether no pool of the cluster is overcommitted."""
        return all(cap.holds() for cap in self._pools.get(cluster, {}).values())

    def charge_replica(self, replica: ModelReplica) -> None:
        """Charge what an observed replica holds (device groups are worked out only for shared pools)."""
        pools = self._pools.get(replica.cluster)
        if pools is None:
            return
        if any(isinstance(pools.get(p), DeviceCapacity) for p in replica.node_cost_by_pool()):
            take_all(pools, replica.charges_by_pool())
        else:  # the common case, kept cheap: whole nodes only
            for pool, n in replica.node_cost_by_pool().items():
                cap = pools.get(pool)
                if cap is not None and n:
                    cap.take(PoolCharge(nodes=n))
        self._version[replica.cluster] += 1

    def charge(self, cluster: str, charges: Mapping[str, PoolCharge], *, sign: int = 1) -> None:
        """Take `charges` per pool (sign=-1 gives them back)."""
        pools = self._pools.get(cluster)
        if pools is None:
            return
        take_all(pools, charges, sign=sign)
        self._version[cluster] += 1
