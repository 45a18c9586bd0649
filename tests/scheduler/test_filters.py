"""Every filter, in order: its aggregatable reason in the summary and its specific detail."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import pytest
from modelplane.errors import InvalidNodeSelectorError
from modelplane.model import Cluster, Deployment, ModelReplica, Stack, TaintEffect
from modelplane.scheduler import schedule

from tests.scheduler.factories import (
    IS_NIC,
    Outline,
    cluster,
    deployment,
    engine,
    gpu,
    is_model,
    leader_worker,
    member,
    nic,
    observed,
    outline,
    pool,
    request,
    requirement,
    selector,
    taint,
    toleration,
)

NO_EXECUTE = TaintEffect.NO_EXECUTE
GROVE_CANNOT = (
    "which runs multi-node engines as Grove PodCliqueSets, not rendered here: no Grove release "
    "(newest v0.1.0-alpha.11) can back MODELPLANE_LEADER_ADDRESS and MODELPLANE_RANK (it appends its GROVE_* "
    "variables after the container's env and has no gang-wide pod index)"
)


@dataclass(frozen=True, kw_only=True)
class Case:
    name: str
    deployment: Deployment
    clusters: Sequence[Cluster]
    replicas: Sequence[ModelReplica] = ()
    want: Outline = field(default_factory=Outline)


H200_ONLY = (engine(members=[member(requests=[request(selectors=[is_model("H200")])])]),)

H200_WITH_IB = (
    engine(
        members=[member(requests=[request(selectors=[is_model("H200")]), request("ib", count=1, selectors=[IS_NIC])])]
    ),
)

CASES = [
    Case(
        name="a Dynamo cluster turns down a deployment with a multi-node engine and names the engines and Grove's gap",
        deployment=deployment(
            engines=[leader_worker("big", workers=1), leader_worker("huge", workers=2), engine("small")]
        ),
        clusters=[
            cluster("a-dynamo", stack=Stack.DYNAMO, pools=[pool("h100", nodes=8)]),
            cluster("b-standard", pools=[pool("h100", nodes=8)]),
        ],
        want=Outline(
            replicas=("b-standard/0 big@h100 huge@h100 small@h100",),
            created=("b-standard/0",),
            message="Scheduled 1 of 1 replicas.",
            details={"a-dynamo": f"engines big, huge: InferenceCluster a-dynamo has stack Dynamo, {GROVE_CANNOT}"},
        ),
    ),
    Case(
        name="with only Dynamo clusters a multi-node deployment has no suitable cluster, for the stack alone",
        deployment=deployment(engines=[leader_worker(workers=1)]),
        clusters=[cluster("a", stack=Stack.DYNAMO)],
        want=Outline(
            message=(
                "Scheduled 0 of 1 replicas; 0/1 clusters are available for the rest: "
                "1 had stack Dynamo, whose multi-node engines are not rendered here."
            ),
            details={"a": f"engine main: InferenceCluster a has stack Dynamo, {GROVE_CANNOT}"},
        ),
    ),
    Case(
        name="a Dynamo cluster takes single-node engines as a Standard one does",
        deployment=deployment(replicas=2, engines=[engine("a"), engine("b")]),
        clusters=[cluster("a-dynamo", stack=Stack.DYNAMO), cluster("b-standard")],
        want=Outline(
            replicas=("a-dynamo/0 a@h100 b@h100", "b-standard/0 a@h100 b@h100"),
            created=("a-dynamo/0", "b-standard/0"),
            message="Scheduled 2 of 2 replicas.",
        ),
    ),
    Case(
        name="a device detail names the request no pool can match, or says the pools match only apart",
        deployment=deployment(engines=H200_WITH_IB),
        clusters=[
            cluster("a-no-ib", pools=[pool("h200", model="H200")]),
            cluster(
                "b-split",
                pools=[
                    pool("h200", model="H200"),
                    pool("h100-ib", devices=[gpu(model="H100"), nic()]),
                ],
            ),
        ],
        want=Outline(
            message=(
                "Scheduled 0 of 1 replicas; 0/2 clusters are available for the rest: "
                "2 had no pool matching an engine's devices."
            ),
            details={
                "a-no-ib": (
                    "engine main: member Standalone device request ib: no device passes selector 1 "
                    '(device.driver == "ib.mellanox.com"); devices here have driver gpu.nvidia.com'
                ),
                "b-split": "engine main: no single pool satisfies every member's devices together",
            },
        ),
    ),
    Case(
        name="each filter's reason is counted once per rejected cluster",
        deployment=deployment(cluster_selector=selector(labels={"region": "eu"}), engines=H200_ONLY),
        clusters=[
            cluster("a-down", labels={"region": "eu"}, ready=False),
            cluster("b-closed", labels={"region": "eu"}, allowed_namespaces=["team-b"]),
            cluster("c-us", labels={"region": "us"}),
            cluster("d-tainted", labels={"region": "eu"}, taints=[taint("maintenance")]),
            cluster("e-h100", labels={"region": "eu"}),
            cluster("f-full", labels={"region": "eu"}, pools=[pool("h200", model="H200", nodes=0)]),
        ],
        want=Outline(
            message=(
                "Scheduled 0 of 1 replicas; 0/6 clusters are available for the rest: 1 did not admit the namespace, "
                "1 did not match clusterSelector, 1 had Ready=False, 1 had no pool matching an engine's devices, "
                "1 had no pool with enough free nodes, 1 had untolerated taints."
            ),
            details={
                "a-down": "cluster is not Ready",
                "b-closed": "namespace team-a is not in allowedNamespaces or allowedNamespaceSelector",
                "c-us": "labels region=us; wants region=eu",
                "d-tainted": "untolerated maintenance:NoSchedule",
                "e-h100": (
                    "engine main: member Standalone device request gpu: no device passes selector 1 "
                    '(device.attributes["gpu.nvidia.com"].model == "H200"); devices here publish attributes '
                    "gpu.nvidia.com/{model}"
                ),
                "f-full": "pool h200: 0 free nodes, engine main needs 1",
            },
        ),
    ),
    Case(
        name="a cluster failing several filters reports the first in filter order",
        deployment=deployment(cluster_selector=selector(labels={"region": "eu"}), engines=H200_ONLY),
        clusters=[cluster("a", ready=False, taints=[taint("gpu")], allowed_namespaces=[])],
        want=Outline(
            message="Scheduled 0 of 1 replicas; 0/1 clusters are available for the rest: 1 had Ready=False.",
            details={"a": "cluster is not Ready"},
        ),
    ),
    Case(
        name="the taint detail lists every untolerated taint and skips the tolerated one",
        deployment=deployment(tolerations=[toleration("gpu", operator="Exists")]),
        clusters=[
            cluster(
                "a",
                taints=[taint("gpu", value="h100"), taint("team", value="x"), taint("spot", effect=NO_EXECUTE)],
            )
        ],
        want=Outline(
            message="Scheduled 0 of 1 replicas; 0/1 clusters are available for the rest: 1 had untolerated taints.",
            details={"a": "untolerated team=x:NoSchedule, spot:NoExecute"},
        ),
    ),
    Case(
        name="tolerated NoSchedule and NoExecute taints admit the replica",
        deployment=deployment(
            tolerations=[
                toleration("gpu", value="h100", effect=TaintEffect.NO_SCHEDULE),
                toleration("spot", operator="Exists"),
            ]
        ),
        clusters=[cluster("a", taints=[taint("gpu", value="h100"), taint("spot", value="yes", effect=NO_EXECUTE)])],
        want=Outline(replicas=("a/0 main@h100",), created=("a/0",), message="Scheduled 1 of 1 replicas."),
    ),
    Case(
        name="clusterSelector expressions pick the matching clusters",
        deployment=deployment(
            replicas=2,
            cluster_selector=selector(
                expressions=[requirement("tier", "In", "gold", "silver"), requirement("quarantine", "DoesNotExist")]
            ),
        ),
        clusters=[
            cluster("a", labels={"tier": "gold"}),
            cluster("b", labels={"tier": "bronze"}),
            cluster("c", labels={"tier": "silver", "quarantine": "true"}),
            cluster("d", labels={"tier": "silver"}),
        ],
        want=Outline(
            replicas=("a/0 main@h100", "d/0 main@h100"),
            created=("a/0", "d/0"),
            message="Scheduled 2 of 2 replicas.",
            details={
                "b": "labels tier=bronze; wants tier in (gold,silver),!quarantine",
                "c": "labels quarantine=true,tier=silver; wants tier in (gold,silver),!quarantine",
            },
        ),
    ),
    Case(
        name="tenant isolation admits by namespace name, by namespace labels, or by either",
        deployment=deployment(replicas=4, namespace_labels={"tenant": "gold"}),
        clusters=[
            cluster("by-name", allowed_namespaces=["team-a"]),
            cluster("by-labels", allowed_namespace_selector=selector(labels={"tenant": "gold"})),
            cluster(
                "by-either",
                allowed_namespaces=["team-z"],
                allowed_namespace_selector=selector(labels={"tenant": "gold"}),
            ),
            cluster(
                "closed", allowed_namespaces=["team-z"], allowed_namespace_selector=selector(labels={"tenant": "free"})
            ),
            cluster("open"),
        ],
        want=Outline(
            replicas=("by-either/0 main@h100", "by-labels/0 main@h100", "by-name/0 main@h100", "open/0 main@h100"),
            created=("by-either/0", "by-labels/0", "by-name/0", "open/0"),
            message="Scheduled 4 of 4 replicas.",
            details={"closed": "namespace team-a is not in allowedNamespaces or allowedNamespaceSelector"},
        ),
    ),
    Case(
        name="a tenant-restricted fleet refuses another namespace even with room to spare",
        deployment=deployment(namespace="team-b", namespace_labels={"tenant": "free"}),
        clusters=[
            cluster("by-name", allowed_namespaces=["team-a"]),
            cluster("by-labels", allowed_namespace_selector=selector(labels={"tenant": "gold"})),
        ],
        want=Outline(
            message="Scheduled 0 of 1 replicas; 0/2 clusters are available for the rest: 2 did not admit the namespace.",
            details={
                "by-labels": "namespace team-b is not in allowedNamespaces or allowedNamespaceSelector",
                "by-name": "namespace team-b is not in allowedNamespaces or allowedNamespaceSelector",
            },
        ),
    ),
    Case(
        name="the capacity detail names the roomiest matching pool and the engine's need",
        deployment=deployment(engines=[leader_worker(workers=3)]),
        clusters=[
            cluster("a", pools=[pool("small", nodes=1), pool("big", nodes=3), pool("h200", nodes=2, model="H200")])
        ],
        want=Outline(
            message="Scheduled 0 of 1 replicas; 0/1 clusters are available for the rest: 1 had no pool with enough free nodes.",
            details={"a": "pool big: 3 free nodes, engine main needs 4"},
        ),
    ),
    Case(
        name="other deployments' replicas are charged before the capacity filter",
        deployment=deployment(engines=[leader_worker(workers=1)]),
        clusters=[cluster("a", pools=[pool("h100", nodes=4)])],
        replicas=[
            observed(deployment("other", engines=[leader_worker(workers=2)]), cluster="a", index=0, pools="h100"),
        ],
        want=Outline(
            message="Scheduled 0 of 1 replicas; 0/1 clusters are available for the rest: 1 had no pool with enough free nodes.",
            details={"a": "pool h100: 1 free node, engine main needs 2"},
        ),
    ),
    Case(
        name="an empty fleet places nothing and says so",
        deployment=deployment(replicas=2),
        clusters=[],
        want=Outline(message="Scheduled 0 of 2 replicas; 0/0 clusters are available for the rest."),
    ),
    Case(
        name="zero replicas needs no cluster",
        deployment=deployment(replicas=0),
        clusters=[cluster("a", ready=False)],
        want=Outline(message="Scheduled 0 of 0 replicas."),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_filters(case: Case) -> None:
    assert outline(schedule(case.deployment, case.clusters, case.replicas), details=True) == case.want


def test_a_selector_that_does_not_compile_raises_invalid_node_selector() -> None:
    bad = deployment(engines=[engine(members=[member(requests=[request(selectors=["device.driver =="])])])])
    with pytest.raises(InvalidNodeSelectorError) as info:
        schedule(bad, [cluster("a")], [])
    assert (info.value.engine, info.value.role, info.value.request) == ("main", "Standalone", "gpu")
