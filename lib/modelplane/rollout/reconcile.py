"""A deployment's reconcile with rollouts: the scheduler's decision, paced by the budget.

The scheduler says where replicas should be; `step` says how much of that happens now. Replicas
the step leaves alone come back exactly as observed (their old revision, their old placement), so
their desired state does not change by a byte; every other desired replica renders the current
revision. Replicas from before revisions were recorded (no revision label) are taken as current.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from modelplane.devices import DeviceMatcher
from modelplane.model import Cluster, Deployment, ModelReplica
from modelplane.rollout.budget import Budget, resolve_budget
from modelplane.rollout.progress import Counts, Observed, Progress, halted, progress
from modelplane.rollout.revision import revision
from modelplane.rollout.step import Fate, Replica, Step, step, wanted_new
from modelplane.scheduler import RemovedReplica, ScheduleResult, schedule
from modelplane.scheduler.arbitrate import yielded
from modelplane.scheduler.retain import REASON_SCALED_DOWN
from modelplane.scheduler.schedule import GONE_REASONS, split_own
from modelplane.scheduler.unreadable import Unreadable

# An old replica above spec.replicas while new-revision replicas surge in: a successor stands in for it.
REASON_REPLACED = "replaced by new revision"


@dataclass(frozen=True, slots=True, kw_only=True)
class Reconciled:
    revision: str
    budget: Budget
    schedule: ScheduleResult  # what the scheduler wanted
    replicas: tuple[ModelReplica, ...]  # the desired replicas, by (cluster, index)
    as_observed: frozenset[str]  # desired replicas re-emitted exactly as observed
    updated: frozenset[str]  # old replicas moved to the current revision in place
    removed: tuple[RemovedReplica, ...]  # replicas removed by this reconcile
    waiting: tuple[RemovedReplica, ...]  # replicas the scheduler wants gone, kept for now
    progress: Progress
    counts: Counts


def _fate(name: str, kept: frozenset[str], removed: dict[str, str], *, current: bool) -> Fate:
    if name in kept:
        return Fate.KEEP
    reason = removed.get(name, "")
    if reason == REASON_SCALED_DOWN:
        # Scale-down takes old revisions first: above spec.replicas because of a surge, an old
        # replica leaves as one a successor replaces, once that successor is Ready.
        return Fate.SCALE_DOWN if current else Fate.MOVE
    if yielded(reason):
        return Fate.YIELD
    return Fate.GONE if reason in GONE_REASONS or not reason else Fate.MOVE


def reconcile(
    deployment: Deployment,
    clusters: Sequence[Cluster],
    replicas: Sequence[ModelReplica],
    *,
    observed: Observed,
    now: datetime,
    matcher: DeviceMatcher | None = None,
    unreadable: Unreadable | None = None,
    composed: Collection[str] | None = None,
    deployments: Sequence[Deployment] | None = None,
) -> Reconciled:
    """Schedule `deployment` and take this reconcile's share of its rollout."""
    rev = revision(deployment)
    budget = resolve_budget(deployment.rollout, deployment.replicas)
    ours, _ = split_own(deployment, sorted(replicas, key=lambda r: (r.namespace, r.name)), composed)
    own = {r.name: r for r in ours}
    current = {n for n, r in own.items() if r.revision in (rev, None)}
    before = Counts(updated=len(current), available=sum(r.ready for r in own.values()), total=len(own))
    stop = halted(
        revision=rev,
        desired=deployment.replicas,
        deadline_seconds=deployment.rollout.progress_deadline_seconds,
        before=before,
        observed=observed,
        now=now,
    )
    frozen = stop or deployment.rollout.paused
    fleet: list[Replica] = []

    def new_count(kept: frozenset[str], removed: Sequence[RemovedReplica]) -> int:
        reasons = {x.name: x.reason for x in removed}
        fleet.extend(
            Replica(name=n, current=n in current, ready=r.ready, fate=_fate(n, kept, reasons, current=n in current))
            for n, r in own.items()
        )
        return wanted_new(replicas=deployment.replicas, budget=budget, frozen=frozen, fleet=fleet)

    result = schedule(
        deployment,
        clusters,
        replicas,
        matcher=matcher,
        unreadable=unreadable,
        composed=composed,
        stale=frozenset(own) - current,
        new_count=new_count,
        deployments=deployments,
    )
    decided = step(replicas=deployment.replicas, budget=budget, frozen=frozen, fleet=fleet, placed=len(result.created))
    # Old replicas waiting to be replaced are not missing: the budget, not capacity, holds their successors.
    replacing = sum(1 for x in fleet if x.fate is Fate.MOVE and not x.current and x.name not in decided.remove)
    placed = min(deployment.replicas, len(result.replicas) + replacing)
    placed = min(deployment.replicas, max(placed, result.diagnosis.placed))  # surge is not over-placement
    result = replace(result, diagnosis=replace(result.diagnosis, placed=placed))
    desired, as_observed = _desired(result, own, current, decided, rev)
    leaving = _replaced(
        result.removed, own, current, stand_ins=min(budget.surge, sum(r.revision == rev for r in desired))
    )
    counts = Counts(
        updated=sum(r.revision == rev for r in desired),
        available=sum(r.ready and r.name not in decided.update for r in desired),
        total=len(desired),
    )
    not_ready = [r.name for r in desired if r.revision == rev and (not r.ready or r.name in decided.update)]
    return Reconciled(
        revision=rev,
        budget=budget,
        schedule=result,
        replicas=desired,
        as_observed=as_observed,
        updated=decided.update,
        removed=tuple(x for x in leaving if x.name in decided.remove or x.name not in own),
        waiting=tuple(x for x in leaving if x.name in own and x.name not in decided.remove),
        progress=progress(
            revision=rev,
            desired=deployment.replicas,
            counts=counts,
            paused=deployment.rollout.paused,
            halted=stop,
            deadline_seconds=deployment.rollout.progress_deadline_seconds,
            not_ready=not_ready,
        ),
        counts=counts,
    )


def _replaced(
    removed: Sequence[RemovedReplica], own: dict[str, ModelReplica], current: set[str], *, stand_ins: int
) -> tuple[RemovedReplica, ...]:
    """The removals, with old replicas a new-revision one stands in for said to be replaced, not scaled down.

    A surge holds at most maxSurge replicas above spec.replicas, each at the new revision: further
    surplus (spec.replicas lowered) is scaled down. The first the scheduler lists are the replaced.
    """
    out: list[RemovedReplica] = []
    for x in removed:
        if x.reason == REASON_SCALED_DOWN and x.name in own and x.name not in current and stand_ins > 0:
            x = replace(x, reason=REASON_REPLACED)  # noqa: PLW2901 - the same removal, said truly
            stand_ins -= 1
        out.append(x)
    return tuple(out)


def _desired(
    result: ScheduleResult, own: dict[str, ModelReplica], current: set[str], decided: Step, rev: str
) -> tuple[tuple[ModelReplica, ...], frozenset[str]]:
    out: list[ModelReplica] = []
    as_observed: set[str] = set()
    for r in result.replicas:
        observed = own.get(r.name)
        if r.name in result.held or (observed is not None and r.name not in current and r.name not in decided.update):
            as_observed.add(r.name)
            out.append(observed if observed is not None else r)
        else:
            out.append(replace(r, revision=rev))
    for x in result.removed:
        if x.name in own and x.name not in decided.remove:
            as_observed.add(x.name)
            out.append(own[x.name])
    return tuple(sorted(out, key=lambda r: (r.cluster, r.index, r.name))), frozenset(as_observed)
