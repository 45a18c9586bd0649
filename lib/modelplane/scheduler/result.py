"""What the scheduler returns: the desired replicas, what was removed, and a Diagnosis.

The Diagnosis is data; messages are rendered from it. Each rejected cluster carries one Status,
its first failing filter, whose `reason` is an aggregatable plural phrase and whose `detail` holds
the specifics, so the histogram in `summary()` sums to the cluster count; the filters that also
failed for that cluster follow in `also`, in filter order. The condition reason is true to the
causes: InsufficientCapacity only when some cluster lacked nothing but free nodes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType

from modelplane import names
from modelplane.model import ModelReplica, PoolCharge
from modelplane.quota import QuotaStanding
from modelplane.stated import StatedDemand

# The capacity filter's reason when room exists but not within the namespace's FleetQuota limit (limit.py)
REASON_QUOTA_EXCEEDED = "would take the namespace's fleet quota past its limit"

NODE_CAPACITY = "NodeCapacity"  # the name of the one filter a freed node can satisfy
MODEL_CACHE = "ModelCache"  # the filter that waits for the deployment's ModelCache


class Code(StrEnum):
    FIT = "Fit"
    UNSCHEDULABLE = "Unschedulable"  # capacity or placement: may fit later
    UNRESOLVABLE = "Unresolvable"  # the cluster can never host this deployment as specified


@dataclass(frozen=True, slots=True, kw_only=True)
class Status:
    code: Code
    reason: str = ""  # plural, aggregatable: "had untolerated taints"
    detail: str = ""  # specific: "taint gpu=maintenance:NoSchedule"
    filter: str = ""  # the filter that failed ("TaintToleration"); empty when it fits
    also: tuple[Status, ...] = ()  # the filters after this one that failed too, in filter order

    @property
    def fits(self) -> bool:
        return self.code is Code.FIT

    @property
    def every(self) -> tuple[Status, ...]:
        """This failure and every later one."""
        return (self, *self.also)


FIT = Status(code=Code.FIT)


@dataclass(frozen=True, slots=True, kw_only=True)
class ClusterScore:
    """Why one feasible cluster ranked where it did: each scorer's 0-100 value and the weighted total."""

    cluster: str
    total: int
    scores: Mapping[str, int]


@dataclass(frozen=True, slots=True, kw_only=True)
class RemovedReplica:
    name: str
    cluster: str
    index: int
    reason: str  # why it left desired state: "scaled down", "cluster deleted", ...


@dataclass(frozen=True, slots=True, kw_only=True)
class Reservation:
    deployment: str  # namespace/name
    replicas: int  # how many of its missing replicas room was held for


@dataclass(frozen=True, slots=True, kw_only=True)
class Diagnosis:
    desired: int
    placed: int
    total_clusters: int
    statuses: Mapping[str, Status] = field(default_factory=lambda: MappingProxyType({}))  # cluster -> first failure
    scores: tuple[ClusterScore, ...] = ()  # of the last bind round, best first
    evaluated: bool = True  # False when nothing was left to place, so no cluster was filtered
    reserved: tuple[Reservation, ...] = ()  # room held for larger deployments' missing replicas (reserve.py)

    @property
    def unplaced(self) -> int:
        return max(self.desired - self.placed, 0)

    def _availability(self, suffix: str) -> str:
        if not self.evaluated:
            return f"nothing was left to place; no cluster was evaluated ({self.total_clusters} in the fleet)."
        rejected = [s for s in self.statuses.values() if not s.fits]
        head = f"{self.total_clusters - len(rejected)}/{self.total_clusters} clusters are available{suffix}"
        if not rejected:
            return head + "."
        counts = Counter(s.reason for s in rejected)
        parts = [f"{n} {reason}" for reason, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]
        return f"{head}: {', '.join(parts)}."

    def main_cause(self) -> tuple[str, Status] | None:
        """The cluster and failure that stand for the most common reason clusters were turned down
        (the first the summary counts), the first such cluster by name; None when none was."""
        rejected = sorted(((c, s) for c, s in self.statuses.items() if not s.fits), key=lambda cs: cs[0])
        if not rejected:
            return None
        counts = Counter(s.reason for _, s in rejected)
        top = min(counts, key=lambda reason: (-counts[reason], reason))
        return next((c, s) for c, s in rejected if s.reason == top)

    def summary(self) -> str:
        """kube-scheduler style: '0/5 clusters are available: 3 had ..., 2 had ...'."""
        return self._availability("")

    def message(self) -> str:
        """The ReplicasScheduled condition message."""
        if self.unplaced == 0:
            return f"Scheduled {self.placed} of {self.desired} replicas."
        return f"Scheduled {self.placed} of {self.desired} replicas; {self._availability(' for the rest')}"

    def reason(self) -> str:
        """The ReplicasScheduled reason: Scheduled, or why replicas are unplaced, true to the causes.

        InsufficientCapacity only when some cluster failed on free nodes alone (free nodes would
        place the replica there), QuotaExceeded when every such cluster had the room but the
        namespace's FleetQuota limit did not; WaitingForModelCache when every cluster turned it
        down for want of a Ready copy of the deployment's ModelCache; otherwise every cluster was
        turned down for what it is (not Ready, not admitting, not selected, tainted, lacking the
        devices): NoSuitableCluster.
        """
        if self.unplaced == 0:
            return names.REASON_SCALED_TO_ZERO if self.desired == 0 else names.REASON_SCHEDULED
        if self.total_clusters == 0:
            return names.REASON_NO_CLUSTERS
        failed = [s for s in self.statuses.values() if not s.fits]
        capacity = [s for s in failed if s.filter == NODE_CAPACITY]
        if capacity and all(s.reason == REASON_QUOTA_EXCEEDED for s in capacity):
            return names.REASON_QUOTA_EXCEEDED  # room exists, but not within the team's fleet quota
        if capacity:
            return names.REASON_INSUFFICIENT_CAPACITY
        if failed and all(s.filter == MODEL_CACHE for s in failed):
            return names.REASON_WAITING_FOR_MODEL_CACHE
        return names.REASON_NO_SUITABLE_CLUSTER


@dataclass(frozen=True, slots=True, kw_only=True)
class Move:
    """A Ready replica that moves so that one more replica of `demand` fits."""

    replica: ModelReplica
    demand: str  # namespace/name of the deployment it makes room for
    cluster: str  # where the room is made
    pools: tuple[str, ...]  # the pools it leaves
    # per pool of `cluster`, what the room takes beyond the nodes the moving replicas hold: successors
    # (placed while those still hold theirs) must not take it back
    room: tuple[tuple[str, PoolCharge], ...] = ()
    # "Reclaimed" or "Preempted" (scheduler/policy.py): it leaves without a successor; "": it moves
    evicted: str = ""

    @property
    def holder(self) -> str:
        """namespace/deployment#index of the moving replica."""
        return f"{self.replica.namespace}/{self.replica.deployment}#{self.replica.index}"

    def text(self) -> str:
        verb = {"Reclaimed": "is reclaimed from", "Preempted": "is preempted on"}.get(self.evicted, "moves off")
        return f"{self.holder} {verb} {self.cluster}/{','.join(self.pools)} to make room for {self.demand}"


@dataclass(frozen=True, slots=True, kw_only=True)
class ScheduleResult:
    replicas: tuple[ModelReplica, ...]  # the desired set, sorted by (cluster, index)
    created: frozenset[str]  # names of replicas placed by this call (not retained)
    removed: tuple[RemovedReplica, ...]
    diagnosis: Diagnosis
    held: frozenset[str] = frozenset()  # names of replicas kept as observed on clusters that cannot be read
    # the fleet's moves (displace.py) this deployment makes, or waits for to place its own replicas
    moves: tuple[Move, ...] = ()
    statement: StatedDemand | None = None  # this deployment's demand as others may read it (stated.py)
    quota: tuple[QuotaStanding, ...] = ()  # its namespace's fleet quota, with this call's decisions
