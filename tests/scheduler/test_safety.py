"""The scheduler's safety rules: overcommitted pools arbitrated oldest first, unreadable fleet objects
contained, ownership by composition, unknown namespace labels, stranded replicas refused.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace

import pytest
from modelplane.errors import InvalidNodeSelectorError
from modelplane.model import Cluster, Deployment, ModelReplica
from modelplane.scheduler import schedule
from modelplane.scheduler.arbitrate import yield_reason
from modelplane.scheduler.filters import REASON_NAMESPACE_NOT_ADMITTED, REASON_UNREADABLE_REPLICA
from modelplane.scheduler.unreadable import REASON_INVALID_CLUSTER, Unreadable

from tests.scheduler.factories import (
    Outline,
    cluster,
    deployment,
    engine,
    is_model,
    member,
    observed,
    outline,
    pool,
    request,
    selector,
)

MINE = deployment("mine", replicas=1)
THEIRS = deployment("theirs", namespace="team-b", replicas=1)
ONE_NODE = [cluster("a", pools=[pool("h100", nodes=1)]), cluster("b", pools=[pool("h100", nodes=1)])]
FULL_A = [cluster("a", pools=[pool("h100", nodes=1)])]
ONE = "Scheduled 1 of 1 replicas."


def at(r: ModelReplica, created: str | None, *, deleting: bool = False) -> ModelReplica:
    return replace(r, created=created, deleting=deleting)


OLD, NEW = "2026-01-01T00:00:00.000000Z", "2026-01-01T00:00:01.000000Z"
MINE_A = observed(MINE, cluster="a", index=0, pools="h100")
THEIRS_A = observed(THEIRS, cluster="a", index=0, pools="h100")


@dataclass(frozen=True, kw_only=True)
class Case:
    name: str
    deployment: Deployment
    clusters: Sequence[Cluster]
    replicas: Sequence[ModelReplica]
    want: Outline
    unreadable: Unreadable | None = None
    composed: Collection[str] | None = None


CASES = [
    Case(
        name="on a pool two deployments both took, the older replica keeps the node",
        deployment=MINE,
        clusters=ONE_NODE,
        replicas=[at(MINE_A, OLD), at(THEIRS_A, NEW)],
        want=Outline(replicas=("a/0 main@h100",), message=ONE),
    ),
    Case(
        name="on a pool two deployments both took, the younger replica yields and is re-placed elsewhere",
        deployment=MINE,
        clusters=ONE_NODE,
        replicas=[at(MINE_A, NEW), at(THEIRS_A, OLD)],
        want=Outline(
            replicas=("b/0 main@h100",),
            created=("b/0",),
            removed=(f"a/0: {yield_reason('h100')}",),
            message=ONE,
        ),
    ),
    Case(
        name="a replica the API server has not stamped ranks after every stamped one",
        deployment=MINE,
        clusters=ONE_NODE,
        replicas=[at(MINE_A, None), at(THEIRS_A, NEW)],
        want=Outline(
            replicas=("b/0 main@h100",),
            created=("b/0",),
            removed=(f"a/0: {yield_reason('h100')}",),
            message=ONE,
        ),
    ),
    Case(
        name="created in the same second, the namespace then the name decide (team-a before team-b)",
        deployment=MINE,
        clusters=ONE_NODE,
        replicas=[at(MINE_A, OLD), at(THEIRS_A, OLD)],
        want=Outline(replicas=("a/0 main@h100",), message=ONE),
    ),
    Case(
        name="an older replica that is being deleted does not take the node from a running one",
        deployment=MINE,
        clusters=ONE_NODE,
        replicas=[at(MINE_A, NEW), at(THEIRS_A, OLD, deleting=True)],
        want=Outline(replicas=("a/0 main@h100",), message=ONE),
    ),
    Case(
        name="a pool with room for everyone moves nobody, whatever the ages",
        deployment=MINE,
        clusters=[cluster("a", pools=[pool("h100", nodes=2)])],
        replicas=[at(MINE_A, NEW), at(THEIRS_A, OLD)],
        want=Outline(replicas=("a/0 main@h100",), message=ONE),
    ),
    Case(
        name="nobody is ranked on a cluster holding a replica that cannot be read",
        deployment=MINE,
        clusters=ONE_NODE,
        replicas=[at(MINE_A, NEW), at(THEIRS_A, OLD)],
        unreadable=Unreadable(replicas_on={"a": "ModelReplica team-c/x: broken"}),
        want=Outline(replicas=("a/0 main@h100",), message=ONE),
    ),
    Case(
        name="a cluster holding a replica that cannot be read takes no new replica",
        deployment=deployment("mine", replicas=2),
        clusters=[cluster("a", pools=[pool("h100", nodes=4)]), cluster("b", pools=[pool("h100", nodes=1)])],
        replicas=[],
        unreadable=Unreadable(replicas_on={"a": "ModelReplica team-c/x: broken"}),
        want=Outline(
            replicas=("b/0 main@h100",),
            created=("b/0",),
            message=f"Scheduled 1 of 2 replicas; 0/2 clusters are available for the rest: 1 had no pool with enough "
            f"free nodes, 1 {REASON_UNREADABLE_REPLICA}.",
            details={"a": "ModelReplica team-c/x: broken", "b": "pool h100: 0 free nodes, engine main needs 1"},
        ),
    ),
    Case(
        name="a replica on a cluster that cannot be read is held as observed and the cluster is diagnosed",
        deployment=deployment("mine", replicas=2),
        clusters=[cluster("b", pools=[pool("h100", nodes=0)])],
        replicas=[MINE_A],
        unreadable=Unreadable(clusters={"a": "InferenceCluster a: spec.nodepools: unknown field"}),
        want=Outline(
            replicas=("a/0 main@h100",),
            message=f"Scheduled 1 of 2 replicas; 0/2 clusters are available for the rest: 1 {REASON_INVALID_CLUSTER}, "
            "1 had no pool with enough free nodes.",
            details={
                "a": "InferenceCluster a: spec.nodepools: unknown field",
                "b": "pool h100: 0 free nodes, engine main needs 1",
            },
        ),
    ),
    Case(
        name="a composed replica labelled for another deployment is still the deployment's own",
        deployment=MINE,
        clusters=ONE_NODE,
        replicas=[replace(MINE_A, deployment="someone-else")],
        composed=[MINE_A.name],
        want=Outline(replicas=("a/0 main@h100",), message=ONE),
    ),
    Case(
        name="a replica labelled as the deployment's that it does not compose is charged and its index is taken",
        deployment=MINE,
        clusters=[cluster("a", pools=[pool("h100", nodes=2)])],
        replicas=[MINE_A],
        composed=[],
        want=Outline(replicas=("a/1 main@h100",), created=("a/1",), message=ONE),
    ),
    Case(
        name="with the Namespace's labels unknown, a label-admitting cluster keeps its replica and takes no new one",
        deployment=replace(deployment("mine", replicas=2), namespace_labels=None),
        clusters=[cluster("a", pools=[pool("h100", nodes=4)], allowed_namespace_selector=selector(labels={"t": "a"}))],
        replicas=[MINE_A],
        want=Outline(
            replicas=("a/0 main@h100",),
            message=f"Scheduled 1 of 2 replicas; 0/1 clusters are available for the rest: 1 "
            f"{REASON_NAMESPACE_NOT_ADMITTED}.",
        ),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_safety_rules(case: Case) -> None:
    result = schedule(case.deployment, case.clusters, case.replicas, unreadable=case.unreadable, composed=case.composed)
    assert outline(result, details=bool(case.want.details)) == case.want


H200 = deployment("mine", engines=[engine(members=[member(requests=[request(selectors=[is_model("h200")])])])])


def test_a_spec_change_that_strands_placed_replicas_everywhere_is_refused() -> None:
    with pytest.raises(InvalidNodeSelectorError) as e:
        schedule(H200, [cluster("a"), cluster("b")], [MINE_A])
    assert str(e.value) == (
        f"engine main member Standalone device request gpu: no device passes selector 1 ({is_model('h200')}); "
        "devices on any cluster the deployment may use publish attributes gpu.nvidia.com/{model}; 1 running "
        f"replica would lose its pool ({MINE_A.name}), so every replica is kept as it is until the spec can be placed"
    )


def test_the_same_change_with_nothing_placed_is_only_a_diagnosis() -> None:
    got = outline(schedule(H200, [cluster("a")], []))
    assert got == Outline(
        message="Scheduled 0 of 1 replicas; 0/1 clusters are available for the rest: 1 had no pool matching an "
        "engine's devices."
    )
