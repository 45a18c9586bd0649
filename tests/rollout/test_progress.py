"""The Progressing condition, and when a rollout halts past its progress deadline (and resumes)."""

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest
from modelplane.rollout import Counts, Observed, Progress, halted, progress
from modelplane.rollout.progress import rolling_message

NOW = datetime(2026, 11, 26, 12, 0, tzinfo=UTC)
REV = "abc123def0"
STUCK = Counts(updated=2, available=3, total=5)
ROLLING = rolling_message(REV, STUCK, 4)


@dataclass(frozen=True)
class HaltCase:
    name: str
    observed: Observed
    want: bool
    before: Counts = STUCK


HALT_CASES = [
    HaltCase(
        "no progress for longer than the deadline halts the rollout",
        Observed(reason="RollingOut", message=ROLLING, since=NOW - timedelta(seconds=601), revision=REV),
        want=True,
    ),
    HaltCase(
        "no progress for less than the deadline does not",
        Observed(reason="RollingOut", message=ROLLING, since=NOW - timedelta(seconds=599), revision=REV),
        want=False,
    ),
    HaltCase(
        "progress since the condition was set (other counts) restarts the clock",
        Observed(reason="RollingOut", message=ROLLING, since=NOW - timedelta(hours=1), revision=REV),
        want=False,
        before=Counts(updated=2, available=4, total=5),
    ),
    HaltCase(
        "a new revision is a new rollout",
        Observed(reason="RollingOut", message=ROLLING, since=NOW - timedelta(hours=1), revision="0123456789"),
        want=False,
    ),
    HaltCase(
        "without a transition time (an offline render) no deadline runs",
        Observed(reason="RollingOut", message=ROLLING, revision=REV),
        want=False,
    ),
    HaltCase(
        "a halted rollout stays halted while nothing changes",
        Observed(reason="ProgressDeadlineExceeded", revision=REV, updated=2, available=3),
        want=True,
    ),
    HaltCase(
        "a halted rollout resumes when a replica becomes Ready",
        Observed(reason="ProgressDeadlineExceeded", revision=REV, updated=2, available=3),
        want=False,
        before=Counts(updated=2, available=4, total=5),
    ),
    HaltCase(
        "a halted rollout resumes on a new revision (the spec was fixed or reverted)",
        Observed(reason="ProgressDeadlineExceeded", revision="0123456789", updated=2, available=3),
        want=False,
    ),
]


@pytest.mark.parametrize("case", HALT_CASES, ids=lambda c: c.name)
def test_halted(case: HaltCase) -> None:
    got = halted(revision=REV, desired=4, deadline_seconds=600, before=case.before, observed=case.observed, now=NOW)
    assert got == case.want


@dataclass(frozen=True)
class Case:
    name: str
    counts: Counts
    want: Progress
    paused: bool = False
    halted: bool = False
    not_ready: tuple[str, ...] = ()


CASES = [
    Case(
        "every replica at the revision and available is complete",
        Counts(updated=4, available=4, total=4),
        Progress(
            status="True", reason="RolloutComplete", message=f"All 4 replicas run revision {REV} and are available."
        ),
    ),
    Case(
        "a rollout under way states its counts",
        STUCK,
        Progress(
            status="True",
            reason="RollingOut",
            message=f"Rolling out revision {REV}: 2 updated, 3 available, 5 in all for 4 replicas.",
        ),
    ),
    Case(
        "a paused rollout says how to continue",
        STUCK,
        Progress(
            status="Unknown",
            reason="RolloutPaused",
            message=f"Rollout of revision {REV} is paused: 2 of 4 replicas updated, 3 available. "
            "Set spec.rollout.paused to false to continue.",
        ),
        paused=True,
    ),
    Case(
        "a halted rollout names the replicas that did not become Ready and what to do",
        STUCK,
        Progress(
            status="False",
            reason="ProgressDeadlineExceeded",
            message=f"Revision {REV} made no progress for 600s: r-1, r-2 did not become Ready (2 of 4 updated, 3 "
            "available). The rollout is halted: the replicas not yet updated keep serving and nothing more is "
            "changed. Fix spec.template and the rollout continues with the new revision, or revert the change.",
        ),
        halted=True,
        not_ready=("r-2", "r-1"),
    ),
    Case(
        "a complete rollout is complete even when paused",
        Counts(updated=4, available=4, total=4),
        Progress(
            status="True", reason="RolloutComplete", message=f"All 4 replicas run revision {REV} and are available."
        ),
        paused=True,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_progress(case: Case) -> None:
    got = progress(
        revision=REV,
        desired=4,
        counts=case.counts,
        paused=case.paused,
        halted=case.halted,
        deadline_seconds=600,
        not_ready=case.not_ready,
    )
    assert got == case.want
