"""Renames within a replica: its new LLMInferenceServices run beside the old ones where its pools have room.

Every template change renames a replica's LLMInferenceServices. One deployment of one Ready replica
on cluster a's pool changes its tolerations (a new revision); whether the pool has a node to spare
decides whether the old objects keep serving (`replacing`, charged in the ledger) or the replica goes
down while it is replaced.
"""

from dataclasses import dataclass, replace
from datetime import UTC, datetime

import pytest
from modelplane.model import ModelReplica
from modelplane.rollout import Counts, revision
from modelplane.rollout.progress import Observed
from modelplane.rollout.reconcile import held, reconcile
from modelplane.scheduler.ledger import Ledger

from tests.scheduler.factories import cluster, deployment, observed, pool, toleration

OLD = deployment(replicas=1)
NEW = replace(OLD, tolerations=(toleration("gpu"),))
OLD_REV, NEW_REV = revision(OLD), revision(NEW)
NOW = datetime(2026, 11, 26, 12, 0, tzinfo=UTC)


def replica(
    *, rev: str = OLD_REV, ready: bool = True, renaming: bool = False, serving_previous: bool = False
) -> ModelReplica:
    r = replace(observed(OLD if rev == OLD_REV else NEW, cluster="a", index=0, pools="pool", ready=ready), revision=rev)
    return replace(r, replacing=held(r.engines) if renaming else (), serving_previous=serving_previous)


ENGINES = held(replica().engines)
NAME = replica().name


@dataclass(frozen=True)
class Case:
    name: str
    observed: ModelReplica
    nodes: int  # in cluster a's only pool
    want_replacing: bool  # the desired replica keeps (or starts keeping) the old objects
    want_updated: frozenset[str]
    want_surged: frozenset[str]
    want_counts: Counts
    want_reason: str = "RollingOut"
    max_surge: int = 1


CASES = [
    Case(
        "with a node to spare the old objects serve beside the new ones: nothing goes down",
        replica(),
        nodes=2,
        want_replacing=True,
        want_updated=frozenset({NAME}),
        want_surged=frozenset({NAME}),
        want_counts=Counts(updated=1, available=1, total=1),
    ),
    Case(
        "with no node to spare the replica is replaced at once and counts as down",
        replica(),
        nodes=1,
        want_replacing=False,
        want_updated=frozenset({NAME}),
        want_surged=frozenset(),
        want_counts=Counts(updated=1, available=0, total=1),
    ),
    Case(
        "while the new objects are not Ready the old ones keep serving",
        replica(rev=NEW_REV, renaming=True, serving_previous=True),
        nodes=2,
        want_replacing=True,
        want_updated=frozenset(),
        want_surged=frozenset(),
        want_counts=Counts(updated=1, available=1, total=1),
    ),
    Case(
        "once the new objects are Ready the old ones are dropped and the rollout is complete",
        replica(rev=NEW_REV, renaming=True),
        nodes=2,
        want_replacing=False,
        want_updated=frozenset(),
        want_surged=frozenset(),
        want_counts=Counts(updated=1, available=1, total=1),
        want_reason="RolloutComplete",
    ),
    Case(
        "an old replica that is not Ready is renamed at once: its old objects serve nothing",
        replica(ready=False),
        nodes=2,
        want_replacing=False,
        want_updated=frozenset({NAME}),
        want_surged=frozenset(),
        want_counts=Counts(updated=1, available=0, total=1),
    ),
    Case(
        "maxSurge 0 never runs a second copy, even with room",
        replica(),
        nodes=2,
        want_replacing=False,
        want_updated=frozenset({NAME}),
        want_surged=frozenset(),
        want_counts=Counts(updated=1, available=0, total=1),
        max_surge=0,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_a_rename_runs_both_only_where_the_pool_has_room(case: Case) -> None:
    dep = replace(NEW, rollout=replace(NEW.rollout, max_surge=case.max_surge))
    clusters = [cluster("a", pools=[pool("pool", nodes=case.nodes)])]
    rolled = reconcile(dep, clusters, [case.observed], observed=Observed(), now=NOW)
    got = (
        [(r.name, r.revision, r.replacing) for r in rolled.replicas],
        rolled.updated,
        rolled.surged,
        rolled.counts,
        rolled.progress.reason,
    )
    want_replicas = [(NAME, NEW_REV, ENGINES if case.want_replacing else ())]
    assert got == (want_replicas, case.want_updated, case.want_surged, case.want_counts, case.want_reason)


def test_a_replica_renamed_beside_its_old_objects_is_charged_both() -> None:
    renaming = replica(rev=NEW_REV, renaming=True, serving_previous=True)
    ledger = Ledger([cluster("a", pools=[pool("pool", nodes=2)])])
    ledger.charge_replica(renaming)
    assert (dict(renaming.node_cost_by_pool()), dict(ledger.free("a"))) == ({"pool": 2}, {"pool": 0})


def test_a_rename_done_frees_the_old_objects_room_in_the_same_reconcile() -> None:
    # Two nodes: the replica's new objects on one, the old ones (let go) on the other, now free again.
    dep = replace(NEW, replicas=2)
    clusters = [cluster("a", pools=[pool("pool", nodes=2)])]
    done = replica(rev=NEW_REV, renaming=True)
    rolled = reconcile(dep, clusters, [done], observed=Observed(), now=NOW)
    assert ([(r.index, r.replacing) for r in rolled.replicas], len(rolled.schedule.created)) == ([(0, ()), (1, ())], 1)
