"""The capacity ledger: free whole nodes per (cluster, pool) during one schedule() call.

Free nodes start at each pool's published node count; every replica that stays in the fleet is
charged at its node cost per pool, and each placement is charged before the next one is
considered, so one pass never overcommits a pool. Charges against clusters or pools the fleet no
longer publishes are ignored (nothing there to hold). Free counts may go negative when observed
state already overcommits a pool (e.g. the pool shrank); such a pool then fits nothing.

A per-cluster version number changes on every charge, so callers can cache anything derived
from a cluster's free nodes until that cluster is charged again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType

from modelplane.model import Cluster


class Ledger:
    """Free nodes per (cluster, pool); mutated only through `charge`."""

    def __init__(self, clusters: Sequence[Cluster]) -> None:
        self._free: dict[str, dict[str, int]] = {c.name: {p.name: p.nodes for p in c.pools} for c in clusters}
        self._version: dict[str, int] = dict.fromkeys(self._free, 0)

    def free(self, cluster: str) -> Mapping[str, int]:
        """Free nodes per pool of `cluster` (empty for an unknown cluster)."""
        return MappingProxyType(self._free.get(cluster, {}))

    def version(self, cluster: str) -> int:
        return self._version.get(cluster, 0)

    def fits(self, cluster: str, cost: Mapping[str, int]) -> bool:
        """Whether every positive charge in `cost` fits the free nodes of its pool."""
        pools = self._free.get(cluster, {})
        return all(n <= 0 or (pool in pools and n <= pools[pool]) for pool, n in cost.items())

    def charge(self, cluster: str, cost: Mapping[str, int], *, sign: int = 1) -> None:
        """Take `cost` nodes per pool (sign=-1 gives them back)."""
        pools = self._free.get(cluster)
        if pools is None:
            return
        for pool, n in cost.items():
            if pool in pools and n:
                pools[pool] -= sign * n
        self._version[cluster] += 1
