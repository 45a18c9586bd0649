"""A rollout preview in words (modelplane.rollout.preview): one row a round, what changes and what stays up.

`modelplane plan` and `render --explain` both print it with `preview_text()`.
"""

from __future__ import annotations

from dataclasses import dataclass

from modelplane.fleet.text import table
from modelplane.rollout.budget import Budget
from modelplane.rollout.preview import End, Preview, Removal

HEADER = ("ROUND", "NEW", "UPDATED IN PLACE", "REMOVED", "AVAILABLE", "TOTAL", "AT REVISION")
ASSUMES = (
    "  Assumes each round's replicas become Ready before the next, except on clusters that are not Ready,",
    "  and the rest of the fleet stays as observed; new replicas go only where the scheduler finds room.",
)


@dataclass(frozen=True, slots=True, kw_only=True)
class RolloutPreview:
    subject: str  # namespace/name
    revision: str
    replicas: int  # spec.replicas
    budget: Budget
    preview: Preview


def _names(names: tuple[str, ...]) -> str:
    return ", ".join(names) or "-"


def _removed(removed: tuple[Removal, ...]) -> str:
    return ", ".join(f"{r.name} ({r.reason})" for r in removed) or "-"


def _plural(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _stalled(p: Preview) -> str:
    why: list[str] = []
    if p.unplaced:
        why.append(f"the fleet has no free room for {_plural(p.unplaced, 'more replica')}")
    if p.down:
        why.append(f"{', '.join(p.down)} {'stays' if len(p.down) == 1 else 'stay'} down on a cluster that is not Ready")
    if not why:
        why.append("the budget allows no further step")
    return f"  Not complete after {_plural(len(p.rounds), 'round')}: {'; '.join(why)}."


def _ending(p: RolloutPreview) -> str:
    rounds = p.preview.rounds
    match p.preview.end:
        case End.PAUSED:
            return "  Paused (spec.rollout.paused): no round changes anything until it is unpaused."
        case End.HALTED:
            return (
                "  Halted (ProgressDeadlineExceeded): no round changes anything until spec.template is fixed "
                "or reverted."
            )
        case End.STALLED:
            return _stalled(p.preview)
        case End.COMPLETE:
            if not rounds:
                return "  Complete: every replica runs the revision and is Ready."
            low = min(r.available for r in rounds)
            return (
                f"  Complete after {_plural(len(rounds), 'round')}; "
                f"at least {low} of {p.replicas} replicas available in every round."
            )


def preview_text(p: RolloutPreview) -> list[str]:
    """The preview's lines: a heading, what it assumes, a row a round, and how it ends."""
    head = (
        f"Rollout of {p.subject} to revision {p.revision} (maxSurge {p.budget.surge}, "
        f"maxUnavailable {p.budget.unavailable}), one reconcile a round:"
    )
    if not p.preview.rounds:
        return [head, _ending(p)]
    rows = [HEADER]
    rows += [
        (
            str(r.number),
            _names(r.created),
            _names(r.updated),
            _removed(r.removed),
            f"{r.available} of {p.replicas}",
            str(r.total),
            str(r.current),
        )
        for r in p.preview.rounds
    ]
    return [head, *ASSUMES, *table(rows), _ending(p)]
