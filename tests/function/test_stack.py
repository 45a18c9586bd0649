"""Modelplane's InferenceCluster.spec.stack, over real gRPC.

A Dynamo cluster runs multi-node engines as Grove PodCliqueSets, which are not rendered here
(`modelplane.scheduler.stack` says why): a deployment with one is not placed there, and a
ModelReplica written by hand for one renders nothing. Single-node engines place and render there
exactly as on a Standard cluster, and a cluster that states Standard is the cluster it always was.
"""

from typing import Any

import pytest
from modelplane import api
from modelplane.render import render_notes, render_replica
from modelplane.rollout import revision

from .conftest import as_dict
from .factories import IMAGE, Case, cluster, deployment, replica_resolved, request, resolved, with_ready
from .test_deployment import ready, scheduled
from .wants import (
    MD_REQUIREMENTS,
    Rollout,
    condition,
    mr_requirements,
    placement_entry,
    rendered_replica,
    replica,
    response,
    result,
)

GPU = {"devices": [{"name": "gpu", "count": 8, "selectors": [{"cel": 'device.driver == "gpu.nvidia.com"'}]}]}
GANG = {
    "name": "main",
    "members": [
        {
            "role": "Leader",
            "nodeSelector": GPU,
            "template": {"spec": {"containers": [{"name": "engine", "image": IMAGE}]}},
        },
        {
            "role": "Worker",
            "worker": {"nodes": 1},
            "nodeSelector": GPU,
            "template": {"spec": {"containers": [{"name": "engine", "image": IMAGE}]}},
        },
    ],
}
GROVE = (
    "InferenceCluster a has stack Dynamo, which runs multi-node engines as Grove PodCliqueSets, not rendered here: "
    "no Grove release (newest v0.1.0-alpha.11) can back MODELPLANE_LEADER_ADDRESS and MODELPLANE_RANK (it appends "
    "its GROVE_* variables after the container's env and has no gang-wide pod index)"
)
REASON = "had stack Dynamo, whose multi-node engines are not rendered here"


def stacked(name: str, stack: str) -> dict[str, Any]:
    obj = cluster(name)
    obj["spec"]["stack"] = stack
    return obj


def gang_replica() -> dict[str, Any]:
    """The replica a gang deployment would have on cluster a, written by hand."""
    obj = replica("a", revision=None)
    obj["spec"]["engines"] = [
        {
            "name": "main",
            "copies": 1,
            "members": [
                {**obj["spec"]["engines"][0]["members"][0], "role": "Leader"},
                {
                    **obj["spec"]["engines"][0]["members"][0],
                    "role": "Worker",
                    "worker": {"nodes": 1},
                },
            ],
        }
    ]
    return obj


GROVE_KEY = "model-serving-main"  # Modelplane's workload key for engine main
GROVE_OBJECT = {
    "apiVersion": "kubernetes.m.crossplane.io/v1alpha1",
    "kind": "Object",
    "spec": {
        "providerConfigRef": {"kind": "ClusterProviderConfig", "name": "a"},
        "forProvider": {
            "manifest": {
                "apiVersion": "grove.io/v1alpha1",
                "kind": "PodCliqueSet",
                "metadata": {"name": "llama-a-0-main-1a2b3", "namespace": "default"},
                "spec": {"replicas": 1},
            }
        },
    },
}


def objects(xr_replica: dict[str, Any]) -> dict[str, tuple[dict[str, Any], bool]]:
    return {o.key: (dict(o.manifest), False) for o in render_replica(api.parse_replica(xr_replica))}


def placed(cluster_name: str) -> dict[str, Any]:
    xr_replica = replica(cluster_name)
    rev = xr_replica["metadata"]["labels"]["modelplane.ai/revision"]
    return response(
        rollout=Rollout(desired=1, revision=rev),
        status={"replicas": {"total": 1, "ready": 0}, "placement": [placement_entry(cluster_name, revision=rev)]},
        resources={f"replica-{cluster_name}-0": (xr_replica, False)},
        conditions=[scheduled(1, 1), ready(0, 1)],
        results=[
            result(
                "NORMAL",
                "ReplicasPlaced",
                f"Placed 1 new replica: {xr_replica['metadata']['name']} on {cluster_name}.",
            )
        ],
        requirements=MD_REQUIREMENTS,
    )


LLMIS = next(o.key for o in render_replica(api.parse_replica(gang_replica())) if o.readiness_source)
REFUSED = f"Scheduled 0 of 1 replicas; 0/1 clusters are available for the rest: 1 {REASON}."
NOT_RENDERED = f"engine main: {GROVE}: nothing new is rendered, the objects already composed are kept"

CASES = [
    Case(
        name="a deployment with a multi-node engine is not placed on a Dynamo cluster, which says why",
        req=request(deployment(engines=[GANG]), required=resolved(clusters=[stacked("a", "Dynamo")])),
        want=response(
            rollout=Rollout(desired=1, revision=revision(api.parse_deployment(deployment(engines=[GANG])))),
            status={
                "replicas": {"total": 0, "ready": 0},
                "placement": [],
                "unplaced": {
                    "count": 1,
                    "summary": f"0/1 clusters are available: 1 {REASON}.",
                    "clusters": [{"cluster": "a", "reason": REASON, "detail": f"engine main: {GROVE}"}],
                },
            },
            conditions=[condition("ReplicasScheduled", "False", "NoSuitableCluster", REFUSED), ready(0, 1)],
            results=[result("WARNING", "NoSuitableCluster", REFUSED)],
            requirements=MD_REQUIREMENTS,
        ),
    ),
    Case(
        name="a single-node deployment is placed on a Dynamo cluster as on any other",
        req=request(deployment(), required=resolved(clusters=[stacked("a", "Dynamo")])),
        want=placed("a"),
    ),
    Case(
        name="a cluster that states the Standard stack, as every current Modelplane stores it, is read and used",
        req=request(deployment(), required=resolved(clusters=[stacked("a", "Standard")])),
        want=placed("a"),
    ),
    Case(
        name="a hand-written ModelReplica with a multi-node engine on a Dynamo cluster renders nothing",
        req=request(gang_replica(), required=replica_resolved(clusters=[stacked("a", "Dynamo")])),
        want=response(
            requirements=mr_requirements(),
            conditions=[
                condition("ReplicaRendered", "False", "CannotRender", NOT_RENDERED),
                condition("ReplicaReady", "False", "NotReady", "0 of 0 serving objects are ready."),
            ],
            results=[result("WARNING", "CannotRender", NOT_RENDERED)],
        ),
    ),
    Case(
        name="a gang ModelReplica Modelplane composed on a Dynamo cluster keeps the PodCliqueSet it composes",
        req=request(
            gang_replica(),
            observed={GROVE_KEY: with_ready(GROVE_OBJECT)},
            required=replica_resolved(clusters=[stacked("a", "Dynamo")]),
        ),
        want=response(
            requirements=mr_requirements(),
            resources={GROVE_KEY: ({**GROVE_OBJECT, "metadata": {}}, True)},  # its owned fields, re-emitted
            conditions=[
                condition("ReplicaRendered", "False", "CannotRender", NOT_RENDERED),
                condition("ReplicaReady", "True", "Ready", "1 of 1 serving objects are ready."),
            ],
            results=[result("WARNING", "CannotRender", NOT_RENDERED)],
        ),
    ),
    Case(
        name="the same ModelReplica on a Standard cluster renders its gang",
        req=request(gang_replica(), required=replica_resolved(clusters=[stacked("a", "Standard")])),
        want=rendered_replica(
            objects(gang_replica()),
            " ".join(
                [f"Rendered {len(objects(gang_replica()))} objects.", *render_notes(api.parse_replica(gang_replica()))]
            ),
            condition("ReplicaReady", "False", "NotReady", f"0 of 1 serving objects are ready; waiting for {LLMIS}."),
        ),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_stack(run_function, case: Case) -> None:
    assert as_dict(run_function(case.req)) == case.want
