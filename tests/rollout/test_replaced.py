"""An old replica above spec.replicas during a surge is replaced by a new-revision one, not scaled down."""

from dataclasses import dataclass, replace
from datetime import UTC, datetime

import pytest
from modelplane import names
from modelplane.model import ModelReplica, RolloutStrategy
from modelplane.rollout import Observed, revision
from modelplane.rollout.reconcile import REASON_REPLACED, reconcile
from modelplane.scheduler.retain import REASON_SCALED_DOWN

from tests.scheduler.factories import cluster, deployment, observed, pool

DEP = deployment("llm", replicas=2)
FLEET = [cluster("a", pools=[pool("h100", nodes=8)])]


def at(index: int, rev: str) -> ModelReplica:
    return replace(observed(DEP, cluster="a", index=index, pools="h100"), revision=rev)


def name(index: int) -> str:
    return names.replica_name(DEP.name, "a", index)


NEW = revision(DEP)


@dataclass(frozen=True)
class Case:
    name: str
    replicas: tuple[ModelReplica, ...]
    want: tuple[tuple[str, str], ...]  # (replica, reason) of every removal, leaving now or later
    max_surge: int | str = 1
    desired: int = 2


CASES = [
    Case(
        "a surge replica Ready: the old replica above spec.replicas is replaced",
        replicas=(at(0, "old"), at(1, NEW), at(2, NEW)),
        want=((name(0), REASON_REPLACED),),
    ),
    Case(
        "spec.replicas lowered with every replica current: scaled down",
        replicas=(at(0, NEW), at(1, NEW), at(2, NEW)),
        want=((name(2), REASON_SCALED_DOWN),),
    ),
    Case(
        "no surge allowed: an old replica above spec.replicas is scaled down, nothing stands in for it",
        replicas=(at(0, "old"), at(1, NEW), at(2, NEW)),
        max_surge=0,
        want=((name(0), REASON_SCALED_DOWN),),
    ),
    Case(
        "spec.replicas lowered during a surge: one old replica replaced, the rest scaled down",
        replicas=(at(0, "old"), at(1, "old"), at(2, NEW), at(3, "old")),
        desired=1,
        want=((name(0), REASON_REPLACED), (name(1), REASON_SCALED_DOWN), (name(3), REASON_SCALED_DOWN)),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_removal_reasons(case: Case) -> None:
    dep = replace(DEP, replicas=case.desired, rollout=RolloutStrategy(max_surge=case.max_surge))
    fleet = [replace(r, revision=revision(dep) if r.revision == NEW else r.revision) for r in case.replicas]
    rolled = reconcile(dep, FLEET, fleet, observed=Observed(), now=datetime(2026, 1, 1, tzinfo=UTC))
    got = sorted((x.name, x.reason) for x in (*rolled.removed, *rolled.waiting))
    assert tuple(got) == case.want
