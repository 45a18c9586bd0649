"""Sticky retention, every reason a replica is re-placed, and the scale-down order."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pytest
from modelplane.model import Cluster, Deployment, ModelReplica, Phase, TaintEffect
from modelplane.scheduler import schedule

from tests.scheduler.factories import (
    Outline,
    cluster,
    deployment,
    engine,
    is_model,
    leader_worker,
    member,
    observed,
    outline,
    pool,
    request,
    selector,
    taint,
)


@dataclass(frozen=True, kw_only=True)
class Case:
    name: str
    deployment: Deployment
    clusters: Sequence[Cluster]
    replicas: Sequence[ModelReplica]
    want: Outline


LLM = deployment()
TWO = deployment(replicas=2)
LW1 = deployment(engines=[leader_worker(workers=1)])  # 2 nodes per replica
ONE = "Scheduled 1 of 1 replicas."
# Prefill one copy, decode two: the growth case below swaps the copy counts.
SWAPPED = deployment(engines=[engine("p", phase=Phase.PREFILL), engine("d", phase=Phase.DECODE, copies=2)])

RETAIN_CASES = [
    Case(
        name="a placed replica stays put although another cluster is now roomier",
        deployment=LLM,
        clusters=[cluster("a", pools=[pool("h100", nodes=1)]), cluster("b", pools=[pool("h100", nodes=9)])],
        replicas=[observed(LLM, cluster="a", index=0, pools="h100")],
        want=Outline(replicas=("a/0 main@h100",), message=ONE),
    ),
    Case(
        name="a replica on a cluster that is not Ready is replaced elsewhere",
        deployment=LLM,
        clusters=[cluster("a", ready=False), cluster("b")],
        replicas=[observed(LLM, cluster="a", index=0, pools="h100", ready=False)],
        want=Outline(replicas=("b/0 main@h100",), created=("b/0",), removed=("a/0: cluster not Ready",), message=ONE),
    ),
    Case(
        name="a new NoSchedule taint does not evict",
        deployment=LLM,
        clusters=[cluster("a", taints=[taint("maintenance")]), cluster("b")],
        replicas=[observed(LLM, cluster="a", index=0, pools="h100")],
        want=Outline(replicas=("a/0 main@h100",), message=ONE),
    ),
    Case(
        name="a replica on a deleted cluster is re-placed",
        deployment=LLM,
        clusters=[cluster("b")],
        replicas=[observed(LLM, cluster="a", index=0, pools="h100")],
        want=Outline(replicas=("b/0 main@h100",), created=("b/0",), removed=("a/0: cluster deleted",), message=ONE),
    ),
    Case(
        name="a replica on a cluster that no longer matches clusterSelector is re-placed",
        deployment=deployment(cluster_selector=selector(labels={"region": "eu"})),
        clusters=[cluster("a", labels={"region": "us"}), cluster("b", labels={"region": "eu"})],
        replicas=[observed(LLM, cluster="a", index=0, pools="h100")],
        want=Outline(
            replicas=("b/0 main@h100",),
            created=("b/0",),
            removed=("a/0: cluster no longer matches clusterSelector",),
            message=ONE,
        ),
    ),
    Case(
        name="an untolerated NoExecute taint evicts",
        deployment=LLM,
        clusters=[cluster("a", taints=[taint("drain", effect=TaintEffect.NO_EXECUTE)]), cluster("b")],
        replicas=[observed(LLM, cluster="a", index=0, pools="h100")],
        want=Outline(
            replicas=("b/0 main@h100",),
            created=("b/0",),
            removed=("a/0: untolerated NoExecute taint",),
            message=ONE,
        ),
    ),
    Case(
        name="a cluster that stops admitting the namespace loses the replica",
        deployment=LLM,
        clusters=[cluster("a", allowed_namespaces=["team-b"]), cluster("b")],
        replicas=[observed(LLM, cluster="a", index=0, pools="h100")],
        want=Outline(
            replicas=("b/0 main@h100",),
            created=("b/0",),
            removed=("a/0: namespace no longer admitted",),
            message=ONE,
        ),
    ),
    Case(
        name="a renamed engine is an engine shape change and takes a fresh index on the same cluster",
        deployment=deployment(engines=[engine("serve")]),
        clusters=[cluster("a")],
        replicas=[observed(LLM, cluster="a", index=0, pools="h100")],
        want=Outline(
            replicas=("a/1 serve@h100",),
            created=("a/1",),
            removed=("a/0: engine shape changed",),
            message=ONE,
        ),
    ),
    Case(
        name="a Standalone member turned Leader and Worker is an engine shape change",
        deployment=LW1,
        clusters=[cluster("a")],
        replicas=[observed(LLM, cluster="a", index=0, pools="h100")],
        want=Outline(
            replicas=("a/1 main@h100",),
            created=("a/1",),
            removed=("a/0: engine shape changed",),
            message=ONE,
        ),
    ),
    Case(
        name="a replica whose pool was removed is re-placed",
        deployment=LLM,
        clusters=[cluster("a", pools=[pool("h200", model="H200")])],
        replicas=[observed(LLM, cluster="a", index=0, pools="h100")],
        want=Outline(replicas=("a/1 main@h200",), created=("a/1",), removed=("a/0: pool removed",), message=ONE),
    ),
    Case(
        name="a replica whose pool no longer satisfies the nodeSelector is re-placed",
        deployment=deployment(engines=[engine(members=[member(requests=[request(selectors=[is_model("H200")])])])]),
        clusters=[cluster("a", pools=[pool("h100"), pool("h200", model="H200")])],
        replicas=[observed(LLM, cluster="a", index=0, pools="h100")],
        want=Outline(
            replicas=("a/1 main@h200",),
            created=("a/1",),
            removed=("a/0: pool no longer satisfies nodeSelector",),
            message=ONE,
        ),
    ),
    Case(
        name="a replica that grew is kept when its pool can hold the increase",
        deployment=deployment(engines=[leader_worker(workers=3)]),
        clusters=[cluster("a", pools=[pool("h100", nodes=4)])],
        replicas=[observed(LW1, cluster="a", index=0, pools="h100")],
        want=Outline(replicas=("a/0 main@h100",), message=ONE),
    ),
    Case(
        name="a replica that grew beyond its pool's free nodes is re-placed elsewhere",
        deployment=deployment(engines=[leader_worker(workers=3)]),
        clusters=[cluster("a", pools=[pool("h100", nodes=3)]), cluster("b", pools=[pool("h100", nodes=4)])],
        replicas=[observed(LW1, cluster="a", index=0, pools="h100")],
        want=Outline(
            replicas=("b/0 main@h100",),
            created=("b/0",),
            removed=("a/0: pool cannot hold the grown replica",),
            message=ONE,
        ),
    ),
    Case(
        name="growth is judged after shrinking replicas give their nodes back",
        deployment=deployment(
            replicas=2, engines=[engine("p", phase=Phase.PREFILL, copies=2), engine("d", phase=Phase.DECODE)]
        ),
        clusters=[cluster("a", pools=[pool("x", nodes=3), pool("y", nodes=3)])],
        replicas=[
            observed(SWAPPED, cluster="a", index=0, pools={"p": "x", "d": "y"}),
            observed(SWAPPED, cluster="a", index=1, pools={"p": "y", "d": "x"}),
        ],
        want=Outline(replicas=("a/0 p@x d@y", "a/1 p@y d@x"), message="Scheduled 2 of 2 replicas."),
    ),
    Case(
        name="a second replica with the same identity is dropped as a duplicate",
        deployment=LLM,
        clusters=[cluster("a")],
        replicas=[
            observed(LLM, cluster="a", index=0, pools="h100"),
            observed(LLM, cluster="a", index=0, pools="h100", name="llm-a-0-copy"),
        ],
        want=Outline(replicas=("a/0 main@h100",), removed=("a/0: duplicate replica index",), message=ONE),
    ),
    Case(
        name="a shortfall fills the lowest free index next to kept replicas",
        deployment=deployment(replicas=3),
        clusters=[cluster("a", pools=[pool("h100", nodes=8)])],
        replicas=[observed(LLM, cluster="a", index=1, pools="h100")],
        want=Outline(
            replicas=("a/0 main@h100", "a/1 main@h100", "a/2 main@h100"),
            created=("a/0", "a/2"),
            message="Scheduled 3 of 3 replicas.",
        ),
    ),
]

SCALE_DOWN_CASES = [
    Case(
        name="scaling down, replicas on not-Ready clusters leave first, as unavailable, not scaled down",
        deployment=deployment(replicas=2),
        clusters=[cluster("a"), cluster("b", ready=False)],
        replicas=[
            observed(LLM, cluster="a", index=0, pools="h100"),
            observed(LLM, cluster="a", index=1, pools="h100"),
            observed(LLM, cluster="b", index=0, pools="h100"),
        ],
        want=Outline(
            replicas=("a/0 main@h100", "a/1 main@h100"),
            removed=("b/0: cluster not Ready",),
            message="Scheduled 2 of 2 replicas.",
        ),
    ),
    Case(
        name="scale down takes from the cluster hosting most replicas, highest index first",
        deployment=deployment(replicas=2),
        clusters=[cluster("a"), cluster("b")],
        replicas=[
            observed(LLM, cluster="a", index=0, pools="h100"),
            observed(LLM, cluster="a", index=3, pools="h100"),
            observed(LLM, cluster="b", index=0, pools="h100"),
        ],
        want=Outline(
            replicas=("a/0 main@h100", "b/0 main@h100"),
            removed=("a/3: scaled down",),
            message="Scheduled 2 of 2 replicas.",
        ),
    ),
    Case(
        name="scale down between equally loaded clusters takes from the name that sorts last",
        deployment=deployment(replicas=1),
        clusters=[cluster("a"), cluster("b")],
        replicas=[observed(LLM, cluster="b", index=0, pools="h100"), observed(LLM, cluster="a", index=0, pools="h100")],
        want=Outline(replicas=("a/0 main@h100",), removed=("b/0: scaled down",), message=ONE),
    ),
    Case(
        name="a replica that is not Ready leaves before a Ready one on a cluster hosting more",
        deployment=deployment(replicas=2),
        clusters=[cluster("a"), cluster("b")],
        replicas=[
            observed(LLM, cluster="a", index=0, pools="h100"),
            observed(LLM, cluster="a", index=1, pools="h100"),
            observed(LLM, cluster="b", index=0, pools="h100", ready=False),
        ],
        want=Outline(
            replicas=("a/0 main@h100", "a/1 main@h100"),
            removed=("b/0: scaled down",),
            message="Scheduled 2 of 2 replicas.",
        ),
    ),
    Case(
        name="a replica that is not Ready leaves before a Ready one whose cluster name sorts last",
        deployment=deployment(replicas=1),
        clusters=[cluster("a"), cluster("b")],
        replicas=[
            observed(LLM, cluster="a", index=0, pools="h100", ready=False),
            observed(LLM, cluster="b", index=0, pools="h100"),
        ],
        want=Outline(replicas=("b/0 main@h100",), removed=("a/0: scaled down",), message=ONE),
    ),
    Case(
        name="scaling to zero removes every replica",
        deployment=deployment(replicas=0),
        clusters=[cluster("a")],
        replicas=[observed(TWO, cluster="a", index=0, pools="h100"), observed(TWO, cluster="a", index=1, pools="h100")],
        want=Outline(
            removed=("a/0: scaled down", "a/1: scaled down"),
            message="Scheduled 0 of 0 replicas.",
        ),
    ),
    Case(
        name="a replica that fails retention is not also counted for scale down",
        deployment=deployment(replicas=1),
        clusters=[cluster("a"), cluster("b", taints=[taint("drain", effect=TaintEffect.NO_EXECUTE)])],
        replicas=[observed(LLM, cluster="a", index=0, pools="h100"), observed(LLM, cluster="b", index=0, pools="h100")],
        want=Outline(
            replicas=("a/0 main@h100",),
            removed=("b/0: untolerated NoExecute taint",),
            message=ONE,
        ),
    ),
]


@pytest.mark.parametrize("case", RETAIN_CASES + SCALE_DOWN_CASES, ids=lambda c: c.name)
def test_retain_and_scale_down(case: Case) -> None:
    assert outline(schedule(case.deployment, case.clusters, case.replicas)) == case.want
