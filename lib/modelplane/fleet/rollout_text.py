"""A deployment's rollout preview as text: one row a round, what changes and how many stay available."""

from __future__ import annotations

from dataclasses import dataclass

from modelplane.fleet.text import table
from modelplane.rollout.budget import Budget
from modelplane.rollout.preview import Preview

HEADER = ("ROUND", "NEW", "UPDATED IN PLACE", "REMOVED", "AVAILABLE", "TOTAL", "AT REVISION")


@dataclass(frozen=True, slots=True, kw_only=True)
class RolloutPreview:
    subject: str  # namespace/name
    revision: str
    replicas: int  # spec.replicas
    budget: Budget
    paused: bool
    preview: Preview


def _names(names: tuple[str, ...]) -> str:
    return ", ".join(names) or "-"


def _ending(p: RolloutPreview) -> str:
    rounds = p.preview.rounds
    if p.paused and not rounds:
        return "  Paused (spec.rollout.paused): no round changes anything until it is unpaused."
    if not p.preview.complete:
        return f"  Not complete after {len(rounds)} rounds: the budget allows no further step."
    low = min(r.available for r in rounds)
    return (
        f"  Complete after {len(rounds)} round{'s' if len(rounds) != 1 else ''}; "
        f"at least {low} of {p.replicas} replicas available in every round."
    )


def rollout_text(p: RolloutPreview) -> list[str]:
    """The preview's lines: a heading, a row a round, and how it ends."""
    head = (
        f"Rollout of {p.subject} to revision {p.revision} (maxSurge {p.budget.surge}, "
        f"maxUnavailable {p.budget.unavailable}), each change Ready by the next round:"
    )
    rows = [HEADER]
    rows += [
        (
            str(r.number),
            str(r.created),
            _names(r.updated),
            _names(r.removed),
            f"{r.available} of {p.replicas}",
            str(r.total),
            str(r.current),
        )
        for r in p.preview.rounds
    ]
    return [head, *(table(rows) if p.preview.rounds else []), _ending(p)]
