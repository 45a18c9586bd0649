"""Capacity arbitration: which replicas keep the nodes of a pool that observed state overcommits.

Deployments are reconciled concurrently and each reads the fleet from a cache that lags, so two of
them can take the last nodes of a pool at the same moment. Once each sees the other's replica, the
pool holds more than it has. Nobody coordinates, so the way out is a rule every deployment applies
alike to what it sees: on each cluster, the replicas holding nodes are ranked oldest first
(metadata.creationTimestamp, which the API server sets and nobody can change; a replica without one
was never stored and ranks after every stamped one), then by namespace and name. In that order a
replica keeps its nodes when every pool it uses still has them; the ones left over lose them. Each
deployment moves only its own left-over replicas and keeps charging everyone else's as they are,
so an overcommitted pool is resolved by the deployments that own the youngest replicas, once each.

Oldest first also matches what the workload cluster most likely did: the first replica created had
its pods scheduled first. Without an overcommitted pool the rule changes nothing: every replica fits.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from modelplane.model import Cluster, ModelReplica
from modelplane.scheduler.capacity import capacities, take_all

_YIELDED = " is overcommitted and older replicas hold its nodes"


def yield_reason(pool: str) -> str:
    """Why a replica left desired state when it lost the nodes of `pool` (see RemovedReplica.reason)."""
    return f"pool {pool}{_YIELDED}"


def yielded(reason: str) -> bool:
    """Whether a removal reason is yield_reason's."""
    return reason.startswith("pool ") and reason.endswith(_YIELDED)


def seniority(replica: ModelReplica) -> tuple[bool, str, str, str]:
    """The global rank of a replica holding nodes: oldest first, then namespace and name."""
    return (replica.created is None, replica.created or "", replica.namespace, replica.name)


def left_over(clusters: Mapping[str, Cluster], holders: Iterable[ModelReplica]) -> dict[tuple[str, str], str]:
    """(namespace, name) -> the pool each replica loses, for the replicas beyond their pools' nodes.

    Charges on pools a cluster does not publish are ignored, as the ledger ignores them.
    """
    free = {name: capacities(c.pools) for name, c in clusters.items()}
    lost: dict[tuple[str, str], str] = {}
    for r in sorted(holders, key=seniority):
        pools = free.get(r.cluster)
        if pools is None:
            continue
        cost = {pool: charge for pool, charge in r.charges_by_pool().items() if pool in pools}
        short = sorted(pool for pool, charge in cost.items() if not pools[pool].fits(charge))
        if short:
            lost[(r.namespace, r.name)] = short[0]
            continue
        take_all(pools, cost)
    return lost
