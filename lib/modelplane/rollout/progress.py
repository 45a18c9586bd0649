"""The Progressing condition, and whether a rollout is halted past its progress deadline.

As a Deployment's: True while replicas move to the desired revision (`RollingOut`) and once they
all run it Ready (`RolloutComplete`), Unknown while paused, False with `ProgressDeadlineExceeded`
when nothing progressed for spec.rollout.progressDeadlineSeconds. No time is stored: the
`RollingOut` message states the progress counts, so Crossplane moves the condition's
lastTransitionTime exactly when progress is made, and the deadline runs from there. A halted
rollout stays halted while its revision and its counts stay as they were; any progress (a replica
becoming Ready) or a new revision resumes it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from modelplane import names

MAX_NAMED = 10  # replicas named in a message; the count says how many more


@dataclass(frozen=True, slots=True, kw_only=True)
class Counts:
    updated: int  # replicas rendering the desired revision
    available: int  # Ready, and not taken down by this reconcile
    total: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Observed:
    """What the deployment showed after its previous reconcile."""

    reason: str | None = None  # of its Progressing condition
    message: str | None = None
    since: datetime | None = None  # the condition's lastTransitionTime
    revision: str | None = None  # status.revision
    updated: int | None = None  # status.replicas.updated
    available: int | None = None  # status.replicas.available


@dataclass(frozen=True, slots=True, kw_only=True)
class Progress:
    status: str  # "True" | "False" | "Unknown"
    reason: str
    message: str


def rolling_message(revision: str, counts: Counts, desired: int) -> str:
    wanted = f"{desired} replica" if desired == 1 else f"{desired} replicas"
    return (
        f"Rolling out revision {revision}: {counts.updated} updated, {counts.available} available, "
        f"{counts.total} in all for {wanted}."
    )


def halted(
    *, revision: str, desired: int, deadline_seconds: int, before: Counts, observed: Observed, now: datetime
) -> bool:
    """Whether the rollout to `revision` stays or becomes halted, given the counts before this reconcile acts."""
    if observed.revision != revision:
        return False
    if observed.reason == names.REASON_PROGRESS_DEADLINE_EXCEEDED:
        return (observed.updated, observed.available) == (before.updated, before.available)
    if observed.reason != names.REASON_ROLLING_OUT or observed.since is None:
        return False
    if observed.message != rolling_message(revision, before, desired):
        return False  # progress since the condition was last set
    return (now - observed.since).total_seconds() > deadline_seconds


def _named(replicas: Sequence[str]) -> str:
    shown = ", ".join(sorted(replicas)[:MAX_NAMED])
    more = len(replicas) - MAX_NAMED
    return f"{shown} and {more} more" if more > 0 else shown


def progress(
    *,
    revision: str,
    desired: int,
    counts: Counts,
    paused: bool,
    halted: bool,
    deadline_seconds: int,
    not_ready: Sequence[str],
    renaming: int = 0,
) -> Progress:
    """The Progressing condition after this reconcile; `not_ready` names desired-revision replicas not Ready.

    `renaming` counts replicas still serving through superseded objects: the rollout is not complete
    until their new ones are Ready too.
    """
    if counts.updated == desired == counts.total and counts.available == desired and not renaming:
        message = f"All {desired} replicas run revision {revision} and are available."
        return Progress(status="True", reason=names.REASON_ROLLOUT_COMPLETE, message=message)
    if halted:
        stuck = f"{_named(not_ready)} did not become Ready" if not_ready else "no replica became Ready"
        message = (
            f"Revision {revision} made no progress for {deadline_seconds}s: {stuck} "
            f"({counts.updated} of {desired} updated, {counts.available} available). The rollout is halted: "
            "the replicas not yet updated keep serving and nothing more is changed. Fix spec.template and "
            "the rollout continues with the new revision, or revert the change."
        )
        return Progress(status="False", reason=names.REASON_PROGRESS_DEADLINE_EXCEEDED, message=message)
    if paused:
        message = (
            f"Rollout of revision {revision} is paused: {counts.updated} of {desired} replicas updated, "
            f"{counts.available} available. Set spec.rollout.paused to false to continue."
        )
        return Progress(status="Unknown", reason=names.REASON_ROLLOUT_PAUSED, message=message)
    return Progress(status="True", reason=names.REASON_ROLLING_OUT, message=rolling_message(revision, counts, desired))
