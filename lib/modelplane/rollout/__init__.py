"""Rolling updates across the fleet: template revisions, the disruption budget, one step per reconcile.

Pure and typed like the scheduler: `revision` digests what a replica renders from, `budget`
resolves maxSurge/maxUnavailable against spec.replicas, `step` decides what one reconcile creates,
updates and removes, `progress` writes the Progressing condition and detects a stalled rollout,
`reconcile` paces the scheduler's decision, and `preview` runs reconciles round by round to show
a rollout before it happens.
"""

from modelplane.rollout.budget import Budget, resolve_budget
from modelplane.rollout.progress import Counts, Observed, Progress, halted, progress
from modelplane.rollout.revision import revision
from modelplane.rollout.step import Fate, Replica, Step, step, wanted_new

__all__ = [
    "Budget",
    "Counts",
    "Fate",
    "Observed",
    "Progress",
    "Replica",
    "Step",
    "halted",
    "progress",
    "resolve_budget",
    "revision",
    "step",
    "wanted_new",
]
