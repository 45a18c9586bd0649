"""Running replicas survive a typo, a relabel and a wrong answer, over real gRPC; Ready tells the truth.

- A spec change that leaves the placed replicas no pool on any cluster the deployment may use is
  bad input (examples/scale-up): every replica is kept and InvalidNodeSelector names the selector
  that matches nothing. A change that some pool satisfies re-places the replicas as before.
- A composed ModelReplica relabelled to another deployment is still this deployment's: it is
  kept, its label restored, and a Warning says so.
- The composite's readiness is stated: Ready only when spec.replicas replicas are ready.
- The Namespace the function reads labels from must be the deployment's own.
- Deployment and cluster names become label values: longer than 63 characters they are refused.
"""

from dataclasses import dataclass
from typing import Any

import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane.names import replica_name
from modelplane.scheduler.filters import REASON_NAMESPACE_NOT_ADMITTED
from modelplane.scheduler.unreadable import REASON_INVALID_CLUSTER

from tests.function.conftest import as_dict
from tests.function.factories import cluster, deployment, namespace, request, resolved, with_ready
from tests.function.wants import (
    MD_REQUIREMENTS,
    Rollout,
    condition,
    placement_entry,
    replica,
    response,
    result,
    revision_of,
)

from .conftest import RunFunction
from .scale_up_cases import outline, scale_up, with_selectors

IS_GPU = 'device.driver == "gpu.nvidia.com"'
TYPO = 'device.attributes["gpu.nvidia.com"].productName.startsWith("nvidia")'  # the product is "NVIDIA ..."
KEPT_SCALE_UP = {
    "replica-eu-west-1-0": {
        "cluster": "eu-west-1",
        "index": "0",
        "pools": ["l40s"],
        "ready": True,
        "as observed": True,
    },
    "replica-us-east-1-0": {
        "cluster": "us-east-1",
        "index": "0",
        "pools": ["a100"],
        "ready": True,
        "as observed": True,
    },
}
TYPO_MESSAGE = (
    f"engine main member Standalone device request gpu: no device passes selector 2 ({TYPO}); devices on any "
    "cluster the deployment may use publish attributes gpu.nvidia.com/{architecture, cudaComputeCapability, "
    "driverVersion, productName} and capacity gpu.nvidia.com/{memory}; 2 running replicas would lose their pool "
    "(llama-8b-eu-west-1-0-be523129, llama-8b-us-east-1-0-5a3f8945), so every replica is kept as it is until the "
    "spec can be placed"
)


def test_a_selector_typo_that_strands_running_replicas_keeps_them(grpc_function: RunFunction) -> None:
    got = outline(grpc_function(scale_up(xr=with_selectors(IS_GPU, TYPO))))
    assert got == {
        "conditions": [
            ("ReplicasScheduled", "FALSE", "InvalidNodeSelector", TYPO_MESSAGE),
            ("ReplicasReady", "FALSE", "ReplicasNotReady", "2 of 4 replicas are ready."),
        ],
        "results": [("WARNING", "InvalidNodeSelector", TYPO_MESSAGE)],
        "ready": "READY_FALSE",
        "status": {"replicas": {"ready": 2, "total": 2}},
        "replicas": KEPT_SCALE_UP,
    }


def test_a_selector_change_some_pool_satisfies_re_places_the_replicas(grpc_function: RunFunction) -> None:
    """Not bad input: the replicas move to the pool the new selector names (us-east-1's h100, 3 nodes);
    the two Ready ones keep serving, exactly as observed, until their successors are Ready."""
    h100 = 'device.attributes["gpu.nvidia.com"].productName == "NVIDIA H100 80GB HBM3"'
    got = outline(grpc_function(scale_up(xr=with_selectors(IS_GPU, h100))))
    new = {f"replica-us-east-1-{i}": ("us-east-1", str(i)) for i in (1, 2, 3)}
    assert (got["conditions"][0][2], got["replicas"]) == (
        "InsufficientCapacity",
        {
            **{k: {**v, "as observed": True} for k, v in KEPT_SCALE_UP.items()},
            **{
                k: {"cluster": c, "index": i, "pools": ["h100"], "ready": False, "as observed": False}
                for k, (c, i) in new.items()
            },
        },
    )


def rn(cluster_name: str, index: int = 0) -> str:
    return replica_name("llama", cluster_name, index)


def observed(cluster_name: str, **labels: str) -> dict[str, Any]:
    obj = with_ready(replica(cluster_name))
    obj["metadata"] = {
        **obj["metadata"],
        "labels": {**obj["metadata"]["labels"], **labels},
        "annotations": {"crossplane.io/composition-resource-name": f"replica-{cluster_name}-0"},
    }
    return obj


@dataclass(frozen=True)
class Case:
    name: str
    req: fnv1.RunFunctionRequest
    want: dict[str, Any]


RELABELLED = observed("a", **{"modelplane.ai/deployment": "someone-else"})
LONG_DEPLOYMENT = "d" * 100
LONG_CLUSTER = "c" * 210
PRIVATE = {"matchLabels": {"tenant": "a"}}


def tenant_cluster(name: str) -> dict[str, Any]:
    obj = cluster(name)
    obj["spec"]["allowedNamespaceSelector"] = PRIVATE
    return obj


LABELS_UNKNOWN = "allowedNamespaceSelector needs the labels of namespace team-a; its Namespace was not found"
LONG_NAME_PROBLEM = (
    f"metadata.name: {len(LONG_DEPLOYMENT)} characters, but it is used as a label value, which holds at most 63"
)

CASES = [
    Case(
        name="a composed replica relabelled to another deployment is kept and its label restored",
        req=request(
            deployment(),
            observed={"replica-a-0": RELABELLED},
            required=resolved(clusters=[cluster("a"), cluster("b")], replicas=[RELABELLED]),
        ),
        want=response(
            rollout=Rollout(desired=1),
            status={"replicas": {"total": 1, "ready": 1}, "placement": [placement_entry("a")]},
            resources={"replica-a-0": (replica("a"), True)},
            conditions=[
                condition("ReplicasScheduled", "True", "Scheduled", "Scheduled 1 of 1 replicas."),
                condition("ReplicasReady", "True", "AllReplicasReady", "1 of 1 replicas are ready."),
            ],
            results=[
                result(
                    "WARNING",
                    "ReplicasRelabelled",
                    f"Restored modelplane.ai/deployment=llama on 1 composed replica: {rn('a')}.",
                )
            ],
            requirements=MD_REQUIREMENTS,
        ),
    ),
    Case(
        name="with no room anywhere, 0 of 2 placed is not Ready",
        req=request(deployment(replicas=2, gpus=8), required=resolved(clusters=[cluster("a", nodes=0)])),
        want=response(
            rollout=Rollout(desired=2, revision=revision_of(gpus=8)),
            status={
                "replicas": {"total": 0, "ready": 0},
                "placement": [],
                "unplaced": {
                    "count": 2,
                    "summary": "0/1 clusters are available: 1 had no pool with enough free nodes.",
                    "clusters": [
                        {
                            "cluster": "a",
                            "reason": "had no pool with enough free nodes",
                            "detail": "pool pool: 0 free nodes, engine main needs 1",
                        }
                    ],
                },
            },
            conditions=[
                condition(
                    "ReplicasScheduled",
                    "False",
                    "InsufficientCapacity",
                    "Scheduled 0 of 2 replicas; 0/1 clusters are available for the rest: 1 had no pool with enough "
                    "free nodes.",
                ),
                condition("ReplicasReady", "False", "ReplicasNotReady", "0 of 2 replicas are ready."),
            ],
            results=[
                result(
                    "WARNING",
                    "InsufficientCapacity",
                    "Scheduled 0 of 2 replicas; 0/1 clusters are available for the rest: 1 had no pool with enough "
                    "free nodes.",
                )
            ],
            requirements=MD_REQUIREMENTS,
            ready=False,
        ),
    ),
    Case(
        name="the labels of another Namespace are not taken for the deployment's",
        req=request(
            deployment(),
            required=resolved(clusters=[tenant_cluster("a")], ns=namespace("team-b", labels={"tenant": "a"})),
        ),
        want=response(
            rollout=Rollout(desired=1),
            status={
                "replicas": {"total": 0, "ready": 0},
                "placement": [],
                "unplaced": {
                    "count": 1,
                    "summary": f"0/1 clusters are available: 1 {REASON_NAMESPACE_NOT_ADMITTED}.",
                    "clusters": [{"cluster": "a", "reason": REASON_NAMESPACE_NOT_ADMITTED, "detail": LABELS_UNKNOWN}],
                },
            },
            conditions=[
                condition(
                    "ReplicasScheduled",
                    "False",
                    "NoSuitableCluster",
                    f"Scheduled 0 of 1 replicas; 0/1 clusters are available for the rest: 1 {REASON_NAMESPACE_NOT_ADMITTED}.",
                ),
                condition("ReplicasReady", "False", "ReplicasNotReady", "0 of 1 replicas are ready."),
            ],
            results=[
                result(
                    "WARNING",
                    "NoSuitableCluster",
                    f"Scheduled 0 of 1 replicas; 0/1 clusters are available for the rest: 1 {REASON_NAMESPACE_NOT_ADMITTED}.",
                )
            ],
            requirements=MD_REQUIREMENTS,
        ),
    ),
    Case(
        name="a replica on a cluster admitting by labels stays while the Namespace's labels are unknown",
        req=request(
            deployment(),
            observed={"replica-a-0": observed("a")},
            required=resolved(
                clusters=[tenant_cluster("a"), cluster("b")],
                replicas=[observed("a")],
                ns=namespace("team-b", labels={"tenant": "a"}),
            ),
        ),
        want=response(
            rollout=Rollout(desired=1),
            status={"replicas": {"total": 1, "ready": 1}, "placement": [placement_entry("a")]},
            resources={"replica-a-0": (replica("a"), True)},
            conditions=[
                condition("ReplicasScheduled", "True", "Scheduled", "Scheduled 1 of 1 replicas."),
                condition("ReplicasReady", "True", "AllReplicasReady", "1 of 1 replicas are ready."),
            ],
            requirements=MD_REQUIREMENTS,
        ),
    ),
    Case(
        name="a deployment name longer than a label value is refused and nothing is composed",
        req=request(deployment(name=LONG_DEPLOYMENT), required=resolved(clusters=[cluster("a")])),
        want=response(
            status={"replicas": {"total": 0, "ready": 0}},
            conditions=[
                condition("ReplicasScheduled", "False", "InvalidSpec", LONG_NAME_PROBLEM),
                condition("ReplicasReady", "False", "ReplicasNotReady", "0 of 1 replicas are ready."),
            ],
            results=[result("WARNING", "InvalidSpec", LONG_NAME_PROBLEM)],
            requirements=MD_REQUIREMENTS,
        ),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_running_replicas_survive_and_readiness_is_true(grpc_function: RunFunction, case: Case) -> None:
    assert as_dict(grpc_function(case.req)) == case.want


def test_a_cluster_name_longer_than_a_label_value_is_left_out_with_its_reason(grpc_function: RunFunction) -> None:
    got = as_dict(
        grpc_function(request(deployment(), required=resolved(clusters=[cluster(LONG_CLUSTER), cluster("b")])))
    )
    problem = (
        f"InferenceCluster {LONG_CLUSTER}: metadata.name: 210 characters, but it is used as a label value, which "
        "holds at most 63"
    )
    diagnosis = as_dict(
        grpc_function(
            request(
                deployment(replicas=2, gpus=8),
                required=resolved(clusters=[cluster(LONG_CLUSTER, nodes=1), cluster("b", nodes=1)]),
            )
        )
    )
    unplaced = diagnosis["desired"]["composite"]["resource"]["status"]["unplaced"]
    assert (list(got["desired"]["resources"]), unplaced["clusters"]) == (
        ["replica-b-0"],
        [
            {
                "cluster": "b",
                "reason": "had no pool with enough free nodes",
                "detail": "pool pool: 0 free nodes, engine main needs 1",
            },
            {"cluster": LONG_CLUSTER, "reason": REASON_INVALID_CLUSTER, "detail": problem},
        ],
    )
