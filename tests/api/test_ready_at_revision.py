"""A ModelReplica is Ready for a revision only once its handler has rendered that revision.

After a deployment moves a replica to a new revision (its `modelplane.ai/revision` label), the
Ready condition it shows was written for the old objects until the ModelReplica's own reconcile
renders the new ones and records `status.renderedRevision`. Counting that stale Ready would let a
rollout take the next replica down while this one is not serving the new revision yet.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from modelplane import api

from tests.function.wants import replica


@dataclass(frozen=True)
class Case:
    name: str
    label: str | None  # the revision label (None: no label)
    ready: str  # the Ready condition's status
    rendered: str | None  # status.renderedRevision (None: not recorded)
    want: bool


CASES = [
    Case("Ready, rendered for its revision", "new", "True", "new", want=True),
    Case(
        "Ready, but rendered for the revision before: the new objects are not up yet", "new", "True", "old", want=False
    ),
    Case("Ready, rendered by a handler that records no revision", "new", "True", None, want=True),
    Case("not Ready, whatever it rendered", "new", "False", "new", want=False),
    Case("no revision label: Ready as it says", None, "True", "old", want=True),
]


def _observed(case: Case) -> dict[str, Any]:
    obj = replica("a", revision=case.label)
    status: dict[str, Any] = {"conditions": [{"type": "Ready", "status": case.ready, "reason": "Test"}]}
    if case.rendered is not None:
        status["renderedRevision"] = case.rendered
    return {**obj, "status": status}


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_ready_counts_for_the_rendered_revision_only(case: Case) -> None:
    assert api.parse_replica(_observed(case)).ready is case.want
