"""The fleet plan view: many deployments reconciled together, where each landed and why some did not.

`build_plan()` is pure. Pools carry every replica of the final fleet: the plan's deployments'
replicas are `new` (placed by the plan), `updated` (given as input, moved to their deployment's
revision in place) or `retained` (given as input and kept); replicas of deployments outside the
plan are `other`; a replica on an older revision than its deployment rolls out is marked
outdated. Each deployment keeps its own FleetView for its placement, its per-cluster verdicts and
scores. Everything is sorted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from modelplane.fleet.gap import Blocker, Gpus, gpus
from modelplane.fleet.text import POOL_HEADER, cluster_rows, excluded_table, full_table, rejection_table, table
from modelplane.fleet.view import ClusterView, FleetView, Origin, chips_by_pool, origin_of, pool_views, taints_of
from modelplane.model import Cluster, ModelReplica
from modelplane.quota import QuotaStanding
from modelplane.scheduler.policy import FleetPolicy

ORDER = "namespace, then name"
BLOCKED_BY = "held by other deployments' replicas on the pools it could use"


@dataclass(frozen=True, slots=True, kw_only=True)
class DeploymentOutcome:
    view: FleetView  # its placement, verdicts and scores in the final round
    reason: str  # its ReplicasScheduled reason (Scheduled, InsufficientCapacity, InvalidSpec, ...)
    message: str  # that condition's message
    failures: tuple[str, ...] = ()  # its ModelReplicas that failed to render: "name: reason: message"
    blocked_by: tuple[Blocker, ...] = ()  # other replicas on the pools its unplaced replicas could use


@dataclass(frozen=True, slots=True, kw_only=True)
class PlanView:
    clusters: tuple[ClusterView, ...]  # every pool with every replica of the final fleet
    deployments: tuple[DeploymentOutcome, ...]  # in reconcile order
    owners: tuple[str, ...]  # the plan's deployments in order, then any other owner of a chip
    rounds: int
    converged: bool
    gpus: Gpus = field(default_factory=lambda: Gpus(fleet=0, placed=0, held=0))
    quotas: tuple[QuotaStanding, ...] = ()  # every FleetQuota's use of the final fleet, by quota and kind
    evictions: tuple[str, ...] = ()  # replicas reclaimed or preempted during the plan, in order

    @property
    def desired(self) -> int:
        return sum(d.view.desired for d in self.deployments)

    @property
    def placed(self) -> int:
        return sum(d.view.placed for d in self.deployments)


def build_plan(
    clusters: Sequence[Cluster],
    replicas: Sequence[ModelReplica],
    deployments: Sequence[DeploymentOutcome],
    *,
    created: frozenset[str],
    rounds: int,
    converged: bool,
    updated: frozenset[str] = frozenset(),
    policy: FleetPolicy | None = None,
    evictions: tuple[str, ...] = (),
) -> PlanView:
    """The fleet after the plan; `updated` are input replicas the plan moved to a new revision in place.

    With `policy`, each FleetQuota's use of the final fleet (every team's, by name); `evictions`,
    the replicas reclaimed or preempted on the way.
    """
    planned = {d.view.subject for d in deployments}

    def origin(r: ModelReplica) -> Origin:
        if f"{r.namespace}/{r.deployment}" not in planned:
            return Origin.OTHER
        return origin_of(r.name, created=created, updated=updated)

    revisions = {d.view.subject: d.view.rollout.revision for d in deployments if d.view.rollout is not None}
    by_pool = chips_by_pool(((r, origin(r)) for r in replicas), revisions)
    views: list[ClusterView] = []
    others: set[str] = set()
    for c in sorted(clusters, key=lambda c: c.name):
        pools = pool_views(c, by_pool)
        others.update(chip.owner for p in pools for chip in p.chips if chip.owner not in planned)
        views.append(
            ClusterView(name=c.name, ready=c.ready, taints=taints_of(c), pools=pools, verdict=None, score=None)
        )
    return PlanView(
        clusters=tuple(views),
        deployments=tuple(deployments),
        owners=(*(d.view.subject for d in deployments), *sorted(others)),
        rounds=rounds,
        converged=converged,
        gpus=gpus(views),
        quotas=quota_standings(policy, clusters, replicas) if policy is not None else (),
        evictions=evictions,
    )


def quota_standings(
    policy: FleetPolicy, clusters: Sequence[Cluster], replicas: Sequence[ModelReplica]
) -> tuple[QuotaStanding, ...]:
    use = policy.usage(clusters, replicas)
    return tuple(
        QuotaStanding(quota=q.name, resource=r.name, guaranteed=r.guaranteed, used=use[(q.name, r.name)], limit=r.limit)
        for q in policy.quotas
        for r in q.resources
    )


def quota_table(plan: PlanView) -> list[str]:
    rows = [("QUOTA", "GPUS", "GUARANTEED", "USED", "BORROWED", "LIMIT")]
    rows += [
        (q.quota, q.resource, str(q.guaranteed), str(q.used), str(q.borrowed), "-" if q.limit is None else str(q.limit))
        for q in plan.quotas
    ]
    return table(rows)


def headline(plan: PlanView) -> str:
    n = len(plan.deployments)
    settled = f"converged after {plan.rounds} rounds" if plan.converged else f"did NOT converge in {plan.rounds} rounds"
    return (
        f"Fleet plan: {n} deployment{'s' if n != 1 else ''}, {plan.placed} of {plan.desired} replicas placed;"
        f" {settled} (order: {ORDER})."
    )


def gpu_line(plan: PlanView) -> str:
    """The gap in one line: GPUs claimed of the fleet's, and those idle on nodes replicas hold."""
    g = plan.gpus
    share = f" ({100 * g.placed // g.fleet}% of the fleet's {g.fleet})" if g.fleet else ""
    return f"GPUs: {g.placed} claimed{share}; {g.stranded} more idle on the nodes replicas hold."


def _where(view: FleetView) -> str:
    counts = [(c.name, c.hosts) for c in view.clusters if c.hosts]
    return ", ".join(f"{name} x{n}" if n > 1 else name for name, n in counts) or "-"


def deployment_table(plan: PlanView) -> list[str]:
    rows = [("DEPLOYMENT", "REPLICAS", "PLACED", "CLUSTERS", "STATUS")]
    rows += [
        (d.view.subject, str(d.view.desired), str(d.view.placed), _where(d.view), d.reason) for d in plan.deployments
    ]
    return table(rows)


def problems(d: DeploymentOutcome) -> list[str]:
    """Why a deployment is not fully placed (or not rendered), with every rejecting cluster's reason."""
    view = d.view
    out: list[str] = []
    if view.unplaced or not view.scheduled:
        out.append(f"{view.subject}: {d.message}")
        out += rejection_table(view)
        full = full_table(view)
        if full:
            out += ["  hosting it, with no room for another:", *full]
        excluded = excluded_table(view)
        if excluded:
            out += ["  left out by the clusterSelector:", *excluded]
        if view.unplaced and d.blocked_by:
            out += [f"  {BLOCKED_BY}:"]
            out += [f"    {b.text()}" for b in d.blocked_by]
    out += [f"{view.subject}: replica {f}" for f in d.failures]
    return out


def plan_text(plan: PlanView) -> str:
    """The whole plan: headline, deployments, why replicas are unplaced, then the pools."""
    out = [headline(plan), gpu_line(plan), *deployment_table(plan)]
    if plan.quotas:
        out += ["Fleet quotas after the plan (GPUs):", *quota_table(plan)]
    if plan.evictions:
        out += ["Reclaimed and preempted during the plan:", *(f"  {e}" for e in plan.evictions)]
    trouble = [line for d in plan.deployments for line in problems(d)]
    if trouble:
        out += ["Unplaced replicas and failures:", *trouble]
    out += ["Fleet after the plan (nodes per pool):", *pool_rows(plan)]
    return "\n".join(out) + "\n"


def pool_rows(plan: PlanView) -> list[str]:
    rows: list[tuple[str, ...]] = [POOL_HEADER]
    for c in plan.clusters:
        rows += cluster_rows(c)
    return table(rows)
