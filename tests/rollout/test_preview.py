"""A rollout previewed round by round through the real reconcile: capacity, drains, pauses and halts."""

from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

import pytest
from modelplane import names
from modelplane.model import Cluster, ModelReplica, RolloutStrategy, TaintEffect
from modelplane.rollout import Observed, revision
from modelplane.rollout.preview import End, Preview, Removal, Round, preview
from modelplane.rollout.reconcile import REASON_REPLACED
from modelplane.scheduler.retain import REASON_CLUSTER_DELETED, REASON_CLUSTER_NOT_READY, REASON_NO_EXECUTE_TAINT

from tests.scheduler.factories import cluster, deployment, observed, pool, taint

DEP = deployment("llm", replicas=2)  # one node a replica; default budget: maxSurge 1, maxUnavailable 1
NOW = datetime(2026, 1, 1, tzinfo=UTC)
DRAIN = taint("drain", effect=TaintEffect.NO_EXECUTE)


def name(cluster_name: str, index: int) -> str:
    return names.replica_name(DEP.name, cluster_name, index)


def old(cluster_name: str, index: int, *, ready: bool = True) -> ModelReplica:
    replica = observed(DEP, cluster=cluster_name, index=index, pools="h100", ready=ready)
    return replace(replica, revision="old")


def current(cluster_name: str, index: int) -> ModelReplica:
    return replace(observed(DEP, cluster=cluster_name, index=index, pools="h100"), revision=revision(DEP))


def nodes(cluster_name: str, n: int, *, ready: bool = True, drained: bool = False) -> Cluster:
    return cluster(cluster_name, pools=[pool("h100", nodes=n)], ready=ready, taints=[DRAIN] if drained else [])


def rnd(
    number: int,
    *,
    created: tuple[str, ...] = (),
    updated: tuple[str, ...] = (),
    removed: tuple[tuple[str, str], ...] = (),
    available: int,
    total: int,
    at_revision: int,
) -> Round:
    return Round(
        number=number,
        created=created,
        updated=updated,
        removed=tuple(Removal(name=n, reason=r) for n, r in removed),
        available=available,
        total=total,
        current=at_revision,
    )


@dataclass(frozen=True)
class Case:
    name: str
    clusters: tuple[Cluster, ...]
    replicas: tuple[ModelReplica, ...]
    want: Preview
    paused: bool = False
    observed: Observed = field(default_factory=Observed)


CASES = [
    Case(
        "room for one more: one replica renamed beside its old objects, the other updated in place",
        clusters=(nodes("a", 3),),
        replicas=(old("a", 0), old("a", 1)),
        want=Preview(
            rounds=(rnd(1, updated=(name("a", 0), name("a", 1)), available=1, total=2, at_revision=2),),
            end=End.COMPLETE,
        ),
    ),
    Case(
        "room for a surge on another cluster only: one new replica there while another updates in place",
        clusters=(nodes("a", 2), nodes("b", 1)),
        replicas=(old("a", 0), old("a", 1)),
        want=Preview(
            rounds=(
                rnd(1, created=(name("b", 0),), updated=(name("a", 1),), available=1, total=3, at_revision=2),
                rnd(2, removed=((name("a", 0), REASON_REPLACED),), available=2, total=2, at_revision=2),
            ),
            end=End.COMPLETE,
        ),
    ),
    Case(
        "no free node for a surge: nothing is created, each replica updates in place in turn",
        clusters=(nodes("a", 2),),
        replicas=(old("a", 0), old("a", 1)),
        want=Preview(
            rounds=(
                rnd(1, updated=(name("a", 0),), available=1, total=2, at_revision=1),
                rnd(2, updated=(name("a", 1),), available=1, total=2, at_revision=2),
            ),
            end=End.COMPLETE,
        ),
    ),
    Case(
        "a drained cluster: its replica's successor lands elsewhere first, and it leaves once that is Ready",
        clusters=(nodes("a", 2, drained=True), nodes("b", 3)),
        replicas=(old("a", 0), old("b", 0)),
        want=Preview(
            rounds=(
                rnd(1, created=(name("b", 1),), available=2, total=3, at_revision=1),
                rnd(2, removed=((name("a", 0), REASON_NO_EXECUTE_TAINT),), available=2, total=2, at_revision=1),
                rnd(3, updated=(name("b", 0),), available=2, total=2, at_revision=2),
            ),
            end=End.COMPLETE,
        ),
    ),
    Case(
        "a deleted cluster: its replica leaves at once, a successor is placed, the other is renamed beside",
        clusters=(nodes("b", 3),),
        replicas=(old("a", 0), old("b", 0)),
        want=Preview(
            rounds=(
                rnd(
                    1,
                    created=(name("b", 1),),
                    updated=(name("b", 0),),
                    removed=((name("a", 0), REASON_CLUSTER_DELETED),),
                    available=1,
                    total=2,
                    at_revision=2,
                ),
            ),
            end=End.COMPLETE,
        ),
    ),
    Case(
        "a cluster that is not Ready: its replica leaves at once; with no room elsewhere the budget stops the rest",
        clusters=(nodes("a", 2, ready=False), nodes("b", 1)),
        replicas=(old("a", 0, ready=False), old("b", 0)),
        want=Preview(
            rounds=(rnd(1, removed=((name("a", 0), REASON_CLUSTER_NOT_READY),), available=1, total=1, at_revision=0),),
            end=End.STALLED,
            unplaced=1,
        ),
    ),
    Case(
        "no room for the replica the deployment lacks, and the budget keeps its one Ready replica: stalled",
        clusters=(nodes("a", 1),),
        replicas=(old("a", 0),),
        want=Preview(rounds=(), end=End.STALLED, unplaced=1),
    ),
    Case(
        "paused: no rounds",
        clusters=(nodes("a", 3),),
        replicas=(old("a", 0), old("a", 1)),
        paused=True,
        want=Preview(rounds=(), end=End.PAUSED),
    ),
    Case(
        "halted past its progress deadline: no rounds",
        clusters=(nodes("a", 3),),
        replicas=(old("a", 0), current("a", 1)),
        observed=Observed(
            reason=names.REASON_PROGRESS_DEADLINE_EXCEEDED, revision=revision(DEP), updated=1, available=2
        ),
        want=Preview(rounds=(), end=End.HALTED),
    ),
    Case(
        "every replica at the revision and Ready: complete, nothing to do",
        clusters=(nodes("a", 3),),
        replicas=(current("a", 0), current("a", 1)),
        want=Preview(rounds=(), end=End.COMPLETE),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_preview(case: Case) -> None:
    dep = replace(DEP, rollout=RolloutStrategy(paused=case.paused))
    got = preview(dep, case.clusters, case.replicas, observed=case.observed, now=NOW)
    assert got == case.want


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_the_preview_does_not_depend_on_the_input_order(case: Case) -> None:
    dep = replace(DEP, rollout=RolloutStrategy(paused=case.paused))
    backward = preview(
        dep, tuple(reversed(case.clusters)), tuple(reversed(case.replicas)), observed=case.observed, now=NOW
    )
    assert backward == case.want
