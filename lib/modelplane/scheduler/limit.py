"""The fleet quota's limit on one deployment's new replicas (scheduler/policy.py).

Placing a replica on one cluster changes what the deployment's team may still place on every
other: so the gate has a generation that moves on each charge, pool assignments are memoised
against it (filters.Context), and bind re-filters every cluster after a placement that charged
the quota.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from modelplane.model import Cluster, PoolCharge
from modelplane.scheduler.engines import EngineOption, cost_by_pool
from modelplane.scheduler.policy import FleetPolicy, Use
from modelplane.scheduler.result import REASON_QUOTA_EXCEEDED

__all__ = ["REASON_QUOTA_EXCEEDED", "QuotaGate"]


class QuotaGate:
    """What the deployment's namespace may still place, under its FleetQuota's limits."""

    def __init__(self, policy: FleetPolicy, namespace: str, use: Use) -> None:
        self.policy = policy
        self.namespace = namespace
        self.use = use
        self.generation = 0

    def over(self, cluster: Cluster, options: Iterable[EngineOption]) -> str | None:
        """Why these engine options on `cluster` would pass the limit (None when they would not)."""
        return self.policy.over_limit(self.namespace, cluster, cost_by_pool(tuple(options)), self.use)

    def charge(self, cluster: Cluster, charges: Mapping[str, PoolCharge]) -> None:
        """Add a placement to the team's use; the generation moves only when it costs some GPU kind."""
        if self.policy.release(self.namespace, cluster, charges, self.use, sign=1):
            self.generation += 1
