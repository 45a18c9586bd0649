"""A deployment's reconcile with rollouts: the scheduler's decision, paced by the budget.

The scheduler says where replicas should be; `step` says how much of that happens now. Replicas
the step leaves alone come back exactly as observed (their old revision, their old placement), so
their desired state does not change by a byte; every other desired replica renders the current
revision. Replicas from before revisions were recorded (no revision label) are taken as current.

Every update renames a replica's LLMInferenceServices (the revision is part of their names). Before
placing anything, each Ready old replica that stays in its pools asks the ledger for room to run
its new objects beside the old ones; reserved (while a surge slot is free), its desired
ModelReplica carries `replacing`, the engines of the old objects, which the ModelReplica handler
keeps serving until the new ones are Ready and every ledger charges meanwhile. The deployment
drops `replacing` once the replica is Ready through its new objects; a replica changed again
before that is updated without it (its superseded objects go at once), within the budget.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from modelplane.devices import DeviceMatcher
from modelplane.model import Cluster, Deployment, ModelReplica, PlacedEngine, PlacedMember, kserve_rendered_as
from modelplane.rollout.budget import Budget, resolve_budget
from modelplane.rollout.progress import Counts, Observed, Progress, halted, progress
from modelplane.rollout.revision import revision
from modelplane.rollout.step import Fate, Replica, Step, step, surge_slots, wanted_new
from modelplane.scheduler import RemovedReplica, ScheduleResult, schedule
from modelplane.scheduler.arbitrate import yielded
from modelplane.scheduler.policy import FleetPolicy
from modelplane.scheduler.retain import EVICTED, REASON_MAKING_ROOM, REASON_SCALED_DOWN
from modelplane.scheduler.schedule import GONE_REASONS, Room, split_own
from modelplane.scheduler.unreadable import Unreadable
from modelplane.stated import StatedDemand

# An old replica above spec.replicas while new-revision replicas surge in: a successor stands in for it.
REASON_REPLACED = "replaced by new revision"


@dataclass(frozen=True, slots=True, kw_only=True)
class Reconciled:
    revision: str
    budget: Budget
    schedule: ScheduleResult  # what the scheduler wanted; its `moves` only those the surge budget covers
    replicas: tuple[ModelReplica, ...]  # the desired replicas, by (cluster, index)
    as_observed: frozenset[str]  # desired replicas re-emitted exactly as observed
    updated: frozenset[str]  # old replicas moved to the current revision in place
    surged: frozenset[str]  # of `updated`, those whose old objects serve until the new ones are Ready
    removed: tuple[RemovedReplica, ...]  # replicas removed by this reconcile
    waiting: tuple[RemovedReplica, ...]  # replicas the scheduler wants gone, kept for now
    progress: Progress
    counts: Counts


def _at_cluster_kserve(clusters: Sequence[Cluster]) -> Callable[[ModelReplica], bool]:
    """Whether a replica renders for the KServe version its cluster runs now (None: the newest).

    A cluster upgraded to another KServe version changes what its replicas render (how args reach
    vLLM, pod labels): a replica rendered for the version before is not current, so the rollout
    budget paces the change, each deployment's replicas on that cluster a few at a time.
    """
    # Compared as rendered: a cluster moving from 0.20 to a later KServe than we know renders alike.
    versions = {c.name: kserve_rendered_as(c.kserve_version) for c in clusters}

    def at(r: ModelReplica) -> bool:
        version = versions.get(r.cluster)
        return version is None or kserve_rendered_as(r.kserve_version) == version

    return at


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
    if reason == REASON_MAKING_ROOM and current:
        return Fate.MAKE_ROOM
    if reason in EVICTED:  # its GPUs go to other demand now: no successor is waited for
        return Fate.GONE
    return Fate.GONE if reason in GONE_REASONS or not reason else Fate.MOVE


def held(engines: tuple[PlacedEngine, ...]) -> tuple[PlacedEngine, ...]:
    """What the ledger charges of `engines`: pools, devices and sizes, no templates."""
    return tuple(
        PlacedEngine(
            name=e.name,
            copies=e.copies,
            members=tuple(
                PlacedMember(role=m.role, worker_nodes=m.worker_nodes, pool=m.pool, device_requests=m.device_requests)
                for m in e.members
            ),
        )
        for e in engines
    )


def _renaming(r: ModelReplica, *, current: bool) -> bool:
    """Whether the replica's rename is under way: its old objects serve until the new ones are Ready."""
    return bool(r.replacing) and current and (r.serving_previous or not r.ready)


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
    demands: Sequence[StatedDemand] | None = None,
    policy: FleetPolicy | None = None,
) -> Reconciled:
    """Schedule `deployment` and take this reconcile's share of its rollout."""
    rev = revision(deployment)
    budget = resolve_budget(deployment.rollout, deployment.replicas)
    ours, _ = split_own(deployment, sorted(replicas, key=lambda r: (r.namespace, r.name)), composed)
    at_cluster = _at_cluster_kserve(clusters)
    current = {r.name for r in ours if r.revision in (rev, None) and at_cluster(r)}
    # A rename that is done (Ready through its new objects) no longer holds its old ones: the
    # ModelReplica handler let them go, so this reconcile neither charges nor keeps them.
    done = {r.name for r in ours if r.replacing and r.name in current and not _renaming(r, current=True)}
    if done:
        replicas = [replace(r, replacing=()) if r.name in done and r in ours else r for r in replicas]
        ours = [replace(r, replacing=()) if r.name in done else r for r in ours]
    own = {r.name: r for r in ours}
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

    def new_count(kept: frozenset[str], removed: Sequence[RemovedReplica], room: Room) -> int:
        reasons = {x.name: x.reason for x in removed}
        fates = {n: _fate(n, kept, reasons, current=n in current) for n in own}
        renaming = {n for n, r in own.items() if _renaming(r, current=n in current)}
        base = [Replica(name=n, current=n in current, ready=r.ready, fate=fates[n]) for n, r in own.items()]
        # Old replicas that must leave their pools need successors first: they take the surge before renames.
        moving = sum(1 for n in own if fates[n] is Fate.MOVE and n not in current)
        slots = surge_slots(replicas=deployment.replicas, budget=budget, fleet=base) - len(renaming) - moving
        reserved: set[str] = set()
        waits: set[str] = set()
        for n, r in sorted(own.items()):
            # A replica changed again mid-rename is updated plainly: what it replaces is not what serves.
            if frozen or budget.surge == 0 or n in current or not r.ready or fates[n] is not Fate.KEEP or r.replacing:
                continue
            if slots > 0 and room(n):
                reserved.add(n)
                slots -= 1
            elif room(n, reserve=False):
                waits.add(n)
        fleet.extend(
            replace(x, room=x.name in reserved, waits=x.name in waits, replacing=x.name in renaming) for x in base
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
        demands=demands,
        policy=policy,
    )
    decided = step(replicas=deployment.replicas, budget=budget, frozen=frozen, fleet=fleet, placed=len(result.created))
    # Old replicas waiting to be replaced are not missing: the budget, not capacity, holds their successors;
    # nor are replicas asked to make room, which serve until theirs are Ready.
    replacing = sum(
        1
        for x in fleet
        if ((x.fate is Fate.MOVE and not x.current) or x.fate is Fate.MAKE_ROOM) and x.name not in decided.remove
    )
    placed = min(deployment.replicas, len(result.replicas) + replacing)
    placed = min(deployment.replicas, max(placed, result.diagnosis.placed))  # surge is not over-placement
    result = replace(result, diagnosis=replace(result.diagnosis, placed=placed))
    if budget.surge == 0 and result.statement is not None:
        # Without surge a replica never moves (a successor must be placed first): stating it movable
        # would let blocked demand wait on a move that never comes.
        result = replace(result, statement=replace(result.statement, movable=False))
    desired, as_observed = _desired(result, own, current, decided, rev)
    stays = _uncovered(fleet, decided.remove, surplus=len(desired) - deployment.replicas)
    result = replace(result, moves=tuple(m for m in result.moves if m.replica.name not in stays))
    down = decided.update - decided.surge
    leaving = _replaced(
        result.removed, own, current, stand_ins=min(budget.surge, sum(r.revision == rev for r in desired))
    )
    counts = Counts(
        updated=sum(r.revision == rev and at_cluster(r) for r in desired),
        available=sum(r.ready and r.name not in down for r in desired),
        total=len(desired),
    )
    renaming = [r.name for r in desired if r.revision == rev and r.replacing]
    not_ready = [r.name for r in desired if r.revision == rev and (not r.ready or r.name in down or r.replacing)]
    return Reconciled(
        revision=rev,
        budget=budget,
        schedule=result,
        replicas=desired,
        as_observed=as_observed,
        updated=decided.update,
        surged=decided.surge,
        removed=tuple(x for x in leaving if x.name in decided.remove or x.name not in own),
        waiting=tuple(x for x in leaving if x.name in own and x.name not in decided.remove and x.name not in stays),
        progress=progress(
            revision=rev,
            desired=deployment.replicas,
            counts=counts,
            paused=deployment.rollout.paused,
            halted=stop,
            deadline_seconds=deployment.rollout.progress_deadline_seconds,
            not_ready=not_ready,
            renaming=len(renaming),
        ),
        counts=counts,
    )


def _uncovered(fleet: Sequence[Replica], remove: frozenset[str], *, surplus: int) -> frozenset[str]:
    """Replicas asked to make room that no successor covers yet: they stay as they are, and do not move.

    Each replica above spec.replicas (`surplus`) is a successor; they cover the movers in the order
    `step` removes them.
    """
    movers = sorted(x.name for x in fleet if x.fate is Fate.MAKE_ROOM and x.name not in remove)
    return frozenset(movers[max(0, surplus) :])


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
            out.append(replace(r, revision=rev, replacing=_replacing(observed, r.name, current, decided)))
    for x in result.removed:
        if x.name in own and x.name not in decided.remove:
            as_observed.add(x.name)
            out.append(own[x.name])
    return tuple(sorted(out, key=lambda r: (r.cluster, r.index, r.name))), frozenset(as_observed)


def _replacing(observed: ModelReplica | None, name: str, current: set[str], decided: Step) -> tuple[PlacedEngine, ...]:
    """The superseded engines a desired replica keeps: its old ones when its rename starts or runs on."""
    if observed is None:
        return ()
    if name in decided.surge:
        return held(observed.engines)
    return observed.replacing if _renaming(observed, current=name in current) else ()
