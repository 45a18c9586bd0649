"""The fleet view: every cluster's pools after one deployment's placement, and why it landed there.

`build()` is a pure function of what `schedule()` saw and returned. Pool occupancy is charged the
way the scheduler's ledger charges it (each replica at `ModelReplica.node_cost_by_pool()`, charges
to clusters or pools the fleet does not publish ignored), with this deployment's observed
replicas replaced by its desired set: a removed replica frees its nodes, a new one takes them.
When the deployment could not be scheduled at all, the function keeps every observed replica,
and so does the view. Everything is sorted, so the view does not depend on input order.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence, Set
from dataclasses import dataclass
from enum import StrEnum

from modelplane.model import Cluster, Deployment, Device, LabelSelector, ModelReplica, NodePool
from modelplane.scheduler.capacity import dra_devices_per_node, shares_devices
from modelplane.scheduler.filters import REASON_SELECTOR_MISMATCH
from modelplane.scheduler.result import ClusterScore, Code, RemovedReplica, ScheduleResult, Status
from modelplane.scheduler.selectors import selector_mismatch


class Origin(StrEnum):
    NEW = "new"  # placed by this scheduling pass
    UPDATED = "updated"  # this deployment's, kept where it was and moved to the new revision in place
    REPLACING = "replacing"  # updated in place, its old objects serving beside it until it is Ready
    LEAVING = "leaving"  # this deployment's, kept until its successor is Ready or the budget allows
    RETAINED = "retained"  # this deployment's, kept where it was
    OTHER = "other"  # another deployment's, charged to the pool


@dataclass(frozen=True, slots=True, kw_only=True)
class Chip:
    """One replica's share of one pool."""

    namespace: str
    deployment: str
    cluster: str
    index: int
    name: str
    nodes: int
    engines: tuple[str, ...]  # engines with a member on this pool, spec order
    origin: Origin
    devices: int = 0  # DRA devices its pods claim on this pool
    revision: str = ""  # the template revision it renders; "" when unknown
    outdated: bool = False  # this deployment's, on a revision older than the one it rolls out
    whole: bool = False  # an exclusive deployment's: each pod holds a whole node, on a shared pool too

    @property
    def owner(self) -> str:
        return f"{self.namespace}/{self.deployment}"

    @property
    def label(self) -> str:
        """The replica within its cluster's row (an index counts per cluster)."""
        return f"{self.owner}#{self.index}"

    @property
    def replica(self) -> str:
        """The replica anywhere: its identity is (cluster, index), so `#0` alone recurs across a fleet."""
        return f"{self.owner} {self.cluster}#{self.index}"


@dataclass(frozen=True, slots=True, kw_only=True)
class Rollout:
    """Where the deployment's rollout stands after this reconcile: its status.replicas and Progressing."""

    revision: str  # the revision replicas move to
    desired: int
    updated: int
    available: int
    total: int
    status: str  # of the Progressing condition: "True" | "False" | "Unknown"
    reason: str
    message: str
    renaming: int = 0  # replicas still serving through the LLMInferenceServices a rename supersedes


@dataclass(frozen=True, slots=True, kw_only=True)
class PoolView:
    name: str
    nodes: int
    used: int
    chips: tuple[Chip, ...]
    devices: str = ""  # what each node carries: "8x NVIDIA H100 80GB HBM3, 8x ib"
    shared: bool = False  # `packing: Devices`: pods share nodes, and `used` is the nodes they need at least
    per_node: int = 0  # DRA devices per node (the GPUs, for the plan's totals)

    @property
    def free(self) -> int:
        """Negative when observed replicas already overcommit the pool (e.g. it shrank)."""
        return self.nodes - self.used


@dataclass(frozen=True, slots=True, kw_only=True)
class ClusterView:
    name: str
    ready: bool
    taints: tuple[str, ...]  # "key=value:Effect"
    pools: tuple[PoolView, ...]
    verdict: Status | None  # the scheduler's last verdict for this deployment; None: not evaluated
    score: ClusterScore | None  # in the last bind round that placed a replica
    hosts: int = 0  # this deployment's replicas on the cluster after the placement

    @property
    def excluded(self) -> bool:
        """The deployment's clusterSelector leaves the cluster out: not a refusal, a choice."""
        return self.verdict is not None and self.verdict.reason == REASON_SELECTOR_MISMATCH

    @property
    def rejected(self) -> bool:
        """Turned the deployment down: not a fit, not left out by the selector, hosting none of it.

        A cluster that hosts a replica and has no room for another has not turned it down.
        """
        return self.verdict is not None and not self.verdict.fits and not self.excluded and self.hosts == 0


@dataclass(frozen=True, slots=True, kw_only=True)
class FleetView:
    namespace: str
    name: str
    desired: int
    placed: int
    clusters: tuple[ClusterView, ...]
    removed: tuple[RemovedReplica, ...]
    owners: tuple[str, ...]  # every "namespace/deployment" with a chip, this one first
    summary: str  # the diagnosis, or why nothing was scheduled
    scores: tuple[ClusterScore, ...] = ()  # best first
    scheduled: bool = True  # False: the scheduler did not run; observed replicas are shown as kept
    rollout: Rollout | None = None  # None: no rollout was computed (nothing scheduled)

    @property
    def subject(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def unplaced(self) -> int:
        return max(self.desired - self.placed, 0)


def taints_of(cluster: Cluster) -> tuple[str, ...]:
    return tuple(sorted(f"{t.key}={t.value}:{t.effect}" if t.value else f"{t.key}:{t.effect}" for t in cluster.taints))


def _product(device: Device) -> str:
    for key, attribute in sorted(device.attributes.items()):
        if key == "productName" or key.endswith("/productName"):
            return str(attribute.value)
    return ""


def devices(pool: NodePool) -> str:
    """Each device kind a node of the pool carries, with its count: its product name, else its name."""
    return ", ".join(f"{d.count}x {_product(d) or d.name}" for d in pool.devices)


def excluded_status(cluster: Cluster, deployment: Deployment) -> Status:
    """The verdict for a cluster the function never saw: the clusterSelector's labels filtered it out."""
    selector = deployment.cluster_selector or LabelSelector()
    return Status(
        code=Code.UNRESOLVABLE, reason=REASON_SELECTOR_MISMATCH, detail=selector_mismatch(selector, cluster.labels)
    )


def _chips(replica: ModelReplica, origin: Origin, current: str | None) -> dict[str, Chip]:
    out: dict[str, Chip] = {}
    for pool, nodes in sorted(replica.node_cost_by_pool().items()):
        if nodes <= 0:
            continue
        engines = tuple(e.name for e in replica.engines if any(m.pool == pool for m in e.members))
        out[pool] = Chip(
            namespace=replica.namespace,
            deployment=replica.deployment,
            cluster=replica.cluster,
            index=replica.index,
            name=replica.name,
            nodes=nodes,
            engines=engines,
            origin=origin,
            devices=sum(
                m.pods_per_copy * e.copies * sum(r.count for r in m.device_requests)
                for e in replica.engines
                for m in e.members
                if m.pool == pool
            ),
            revision=replica.revision or "",
            whole=replica.exclusive_nodes,
            # Another deployment's revision says nothing about this one's rollout; no label counts as current.
            outdated=origin is not Origin.OTHER and current is not None and replica.revision not in (current, None),
        )
    return out


def chips_by_pool(
    occupancy: Iterable[tuple[ModelReplica, Origin]], revisions: Mapping[str, str] | None = None
) -> dict[tuple[str, str], list[Chip]]:
    """What each (cluster, pool) holds: a chip per replica with nodes there, in replica order.

    `revisions` are the revisions deployments ("namespace/name") roll out; their replicas on any
    other are marked outdated.
    """
    by_pool: dict[tuple[str, str], list[Chip]] = {}
    for replica, origin in occupancy:
        current = (revisions or {}).get(f"{replica.namespace}/{replica.deployment}")
        for pool, chip in _chips(replica, origin, current).items():
            by_pool.setdefault((replica.cluster, pool), []).append(chip)
    for chips in by_pool.values():
        chips.sort(key=_chip_order)
    return by_pool


def pool_views(cluster: Cluster, by_pool: Mapping[tuple[str, str], Sequence[Chip]]) -> tuple[PoolView, ...]:
    """The cluster's pools by name, each with its chips and the nodes they use."""
    return tuple(
        PoolView(
            name=pool.name,
            nodes=pool.nodes,
            used=-(-sum(c.nodes * per_node if c.whole else c.devices for c in chips) // max(per_node, 1))
            if shared
            else sum(c.nodes for c in chips),
            chips=chips,
            devices=devices(pool) + (" (shared)" if shared else ""),
            shared=shared,
            per_node=per_node,
        )
        for pool in sorted(cluster.pools, key=lambda p: p.name)
        for chips in (tuple(by_pool.get((cluster.name, pool.name), ())),)
        for shared in (shares_devices(pool),)
        for per_node in (dra_devices_per_node(pool),)
    )


def origin_of(
    name: str,
    *,
    created: Set[str],
    updated: Set[str] = frozenset(),
    leaving: Set[str] = frozenset(),
    replacing: Set[str] = frozenset(),
) -> Origin:
    """What this reconcile does to one of the deployment's replicas, in the words `render --explain` uses."""
    if name in created:
        return Origin.NEW
    if name in replacing:
        return Origin.REPLACING
    if name in updated:
        return Origin.UPDATED
    return Origin.LEAVING if name in leaving else Origin.RETAINED


def _occupancy(
    deployment: Deployment,
    replicas: Sequence[ModelReplica],
    result: ScheduleResult | None,
    *,
    updated: Set[str],
    leaving: Set[str],
    replacing: Set[str],
) -> list[tuple[ModelReplica, Origin]]:
    def ours(r: ModelReplica) -> bool:
        return r.namespace == deployment.namespace and r.deployment == deployment.name

    held = [(r, Origin.OTHER) for r in replicas if not ours(r)]
    if result is None:
        return held + [(r, Origin.RETAINED) for r in replicas if ours(r)]
    return held + [
        (r, origin_of(r.name, created=result.created, updated=updated, leaving=leaving, replacing=replacing))
        for r in result.replicas
    ]


def _chip_order(c: Chip) -> tuple[str, str, int, str]:
    return (c.namespace, c.deployment, c.index, c.name)


def build(
    deployment: Deployment,
    clusters: Sequence[Cluster],
    replicas: Sequence[ModelReplica],
    result: ScheduleResult | None,
    *,
    problem: str = "",
    excluded: Sequence[Cluster] = (),
    rollout: Rollout | None = None,
    updated: Set[str] = frozenset(),
    leaving: Set[str] = frozenset(),
    replacing: Set[str] = frozenset(),
) -> FleetView:
    """The fleet after `result`; with result=None, `problem` says why nothing was scheduled.

    `excluded` are clusters the function was not given (an input from before every cluster was
    required): shown as left out by the clusterSelector. `rollout` is where the
    deployment's rollout stands; its replicas on another revision are marked outdated. `updated`
    are its replicas this reconcile moves to the new revision in place (`replacing` those of them
    whose old objects keep serving beside them), `leaving` those it keeps only until their
    successors are Ready.
    """
    occupancy = _occupancy(deployment, replicas, result, updated=updated, leaving=leaving, replacing=replacing)
    subject = f"{deployment.namespace}/{deployment.name}"
    by_pool = chips_by_pool(occupancy, {subject: rollout.revision} if rollout else None)
    statuses: dict[str, Status] = dict(result.diagnosis.statuses) if result is not None else {}
    statuses.update({c.name: excluded_status(c, deployment) for c in excluded})
    scores: Mapping[str, ClusterScore] = {s.cluster: s for s in result.diagnosis.scores} if result is not None else {}
    views: list[ClusterView] = []
    owners: set[str] = set()
    for cluster in sorted([*clusters, *excluded], key=lambda c: c.name):
        pools = pool_views(cluster, by_pool)
        chips = [c for p in pools for c in p.chips]
        owners.update(c.owner for c in chips)
        hosted = {c.name for c in chips if c.owner == subject}
        views.append(
            ClusterView(
                name=cluster.name,
                ready=cluster.ready,
                taints=taints_of(cluster),
                pools=pools,
                verdict=statuses.get(cluster.name),
                score=scores.get(cluster.name),
                hosts=len(hosted),
            )
        )
    owners.discard(subject)
    if result is None:
        placed = sum(1 for r in replicas if r.namespace == deployment.namespace and r.deployment == deployment.name)
    else:
        placed = result.diagnosis.placed
    return FleetView(
        namespace=deployment.namespace,
        name=deployment.name,
        desired=result.diagnosis.desired if result is not None else deployment.replicas,
        placed=placed,
        clusters=tuple(views),
        removed=result.removed if result is not None else (),
        owners=(subject, *sorted(owners)),
        summary=result.diagnosis.summary() if result is not None else problem,
        scores=result.diagnosis.scores if result is not None else (),
        scheduled=result is not None,
        rollout=rollout,
    )
