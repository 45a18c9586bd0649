"""A rollout previewed round by round: the real reconcile, run again on what each round leaves.

Each round is one reconcile (`reconcile`): the scheduler and its ledger place a new replica only
where the fleet has free capacity for it, a replica on a drained, deselected or not-Ready cluster
moves as the function moves it (make-before-break), a replica whose cluster is gone leaves at once, and the
budget paces the rest. The first round sees the fleet, readiness and the Progressing condition as
observed: a paused rollout, or one halted past its progress deadline, has no rounds. Between rounds
the preview assumes that every replica the round leaves becomes Ready, except on a cluster that is
not Ready (a replica waiting there for its successor serves nothing), and that the rest of the fleet stays as
observed. The preview ends when a round changes nothing: complete, or stalled with the reason.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from enum import StrEnum

from modelplane import names
from modelplane.devices import DeviceMatcher
from modelplane.model import Cluster, Deployment, ModelReplica
from modelplane.rollout.progress import Observed
from modelplane.rollout.reconcile import Reconciled, reconcile
from modelplane.scheduler.schedule import split_own
from modelplane.scheduler.unreadable import Unreadable

MAX_ROUNDS = 100  # a rollout that changes something every round ends long before this


class End(StrEnum):
    COMPLETE = "Complete"  # every replica runs the revision, Ready
    PAUSED = "Paused"  # spec.rollout.paused: no rounds
    HALTED = "Halted"  # past its progress deadline (ProgressDeadlineExceeded): no rounds
    STALLED = "Stalled"  # a round would change nothing, short of complete


@dataclass(frozen=True, slots=True, kw_only=True)
class Removal:
    name: str
    reason: str  # the scheduler's or the rollout's: "untolerated NoExecute taint", "replaced by ...", ...


@dataclass(frozen=True, slots=True, kw_only=True)
class Round:
    number: int
    created: tuple[str, ...]  # new-revision replicas placed on free capacity
    updated: tuple[str, ...]  # old replicas updated in place (down until the next round)
    removed: tuple[Removal, ...]
    available: int  # Ready replicas left serving through this round
    total: int  # replicas after the round
    current: int  # replicas at the revision after the round


@dataclass(frozen=True, slots=True, kw_only=True)
class Preview:
    rounds: tuple[Round, ...]
    end: End
    unplaced: int = 0  # replicas the fleet has no room for when the preview ends
    down: tuple[str, ...] = ()  # replicas left on clusters that are not Ready, assumed to stay down


def preview(
    deployment: Deployment,
    clusters: Sequence[Cluster],
    replicas: Sequence[ModelReplica],
    *,
    observed: Observed,
    now: datetime,
    matcher: DeviceMatcher | None = None,
    unreadable: Unreadable | None = None,
    composed: Collection[str] | None = None,
) -> Preview:
    """The rounds that take the deployment's replicas to its revision, one reconcile each."""
    if deployment.rollout.paused:
        return Preview(rounds=(), end=End.PAUSED)
    serving = frozenset(c.name for c in clusters if c.ready)
    fleet = sorted(replicas, key=lambda r: (r.namespace, r.name))
    rounds: list[Round] = []
    while True:
        rolled = reconcile(
            deployment,
            clusters,
            fleet,
            observed=observed,
            now=now,
            matcher=matcher,
            unreadable=unreadable,
            composed=composed,
        )
        if rolled.progress.reason == names.REASON_PROGRESS_DEADLINE_EXCEEDED:
            return Preview(rounds=(), end=End.HALTED)
        done = _round(len(rounds) + 1, rolled)
        if done is None or len(rounds) == MAX_ROUNDS:
            complete = rolled.progress.reason == names.REASON_ROLLOUT_COMPLETE
            return Preview(
                rounds=tuple(rounds),
                end=End.COMPLETE if complete else End.STALLED,
                unplaced=max(0, rolled.schedule.diagnosis.desired - rolled.schedule.diagnosis.placed),
                down=tuple(r.name for r in rolled.replicas if r.cluster not in serving),
            )
        rounds.append(done)
        _, others = split_own(deployment, fleet, composed)
        # By the next round whatever this one left is Ready, where its cluster serves at all.
        fleet = sorted(
            [*others, *(replace(r, ready=r.cluster in serving) for r in rolled.replicas)],
            key=lambda r: (r.namespace, r.name),
        )
        composed = None if composed is None else frozenset(r.name for r in rolled.replicas)
        observed = Observed()  # each round makes progress, so no deadline runs out


def _round(number: int, rolled: Reconciled) -> Round | None:
    """What the reconcile changes, as a round; None when it changes nothing."""
    created = tuple(sorted(rolled.schedule.created))
    removed = tuple(Removal(name=x.name, reason=x.reason) for x in sorted(rolled.removed, key=lambda x: x.name))
    if not created and not rolled.updated and not removed:
        return None
    return Round(
        number=number,
        created=created,
        updated=tuple(sorted(rolled.updated)),
        removed=removed,
        available=rolled.counts.available,
        total=rolled.counts.total,
        current=rolled.counts.updated,
    )
