"""Fleet quotas and priorities: what the platform decides about who gets contested GPUs.

Both come from platform-owned objects only. A FleetQuota (cluster-scoped) selects namespaces and
says, per kind of GPU, how many its namespaces are guaranteed fleet-wide and how many they may
use at most; a deployment's priority is the value of the PriorityClass it names. A tenant writes
neither: it may name a priority class, but only one its clusters' KAI rules let its namespace use
(scheduler/kai.py), and its value is the PriorityClass object's.

A kind of GPU is a CEL expression over DRA devices, the way deployments choose devices. A replica
is charged, per kind, the matching devices of the whole nodes it holds on `packing: Nodes` pools
and the devices it claims on `packing: Devices` pools that have such devices.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from modelplane.model import LabelSelector
from modelplane.names import KAI_DEFAULT_PRIORITY_CLASS


class Preemption(enum.StrEnum):
    """Whose replicas a quota's deployments may preempt when they fit nowhere (Kueue's policies)."""

    NEVER = "Never"
    WITHIN_QUOTA = "WithinQuota"  # lower-priority replicas of the same quota's namespaces
    ANY = "Any"  # also other teams' borrowed replicas of lower priority


@dataclass(frozen=True, slots=True, kw_only=True)
class QuotaResource:
    """One kind of GPU: `guaranteed` fleet-wide, `limit` at most (None: no limit beyond the fleet)."""

    name: str
    selector: str  # CEL over a DRA device, as in a deployment's device requests
    guaranteed: int = 0
    limit: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class FleetQuota:
    name: str
    namespaces: tuple[str, ...] = ()  # selected by name
    namespace_selector: LabelSelector | None = None  # and by labels
    resources: tuple[QuotaResource, ...] = ()
    preemption: Preemption = Preemption.NEVER
    # Replicas taken from others at once for one of this quota's deployments (reclaim and preemption)
    max_evictions: int = 1


@dataclass(frozen=True, slots=True, kw_only=True)
class PriorityClasses:
    """PriorityClass values by name, as the control plane holds them."""

    values: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    global_default: int = 0  # the globalDefault class's value, else 0 (Kubernetes' rule)

    def value(self, name: str) -> int:
        """The priority of a deployment naming `name` ("" = none: the class KAI gives serving workloads)."""
        return self.values.get(name or KAI_DEFAULT_PRIORITY_CLASS, self.global_default)


@dataclass(frozen=True, slots=True, kw_only=True)
class QuotaStanding:
    """One kind of a quota as it stands: what is guaranteed, used, borrowed and the limit."""

    quota: str
    resource: str
    guaranteed: int
    used: int
    limit: int | None

    @property
    def borrowed(self) -> int:
        return max(self.used - self.guaranteed, 0)
