"""A fleet moving from Modelplane over real gRPC: its published pool shapes, its own ModelReplicas
(selectors as `cel: <string>`, no spec.scheduling, no replica-index or deployment label), its model
cache field, and replica-index labels that are not ASCII decimal numbers.

Every case compares the whole response.
"""

from dataclasses import dataclass
from typing import Any

import pytest
from modelplane import api
from modelplane.names import replica_name

from .conftest import as_dict
from .factories import H100, IMAGE, Case, cluster, deployment, request, resolved, with_ready
from .wants import MD_REQUIREMENTS, Rollout, condition, placement_entry, replica, response, result


def published(obj: dict[str, Any], *, gpus: int | None = None) -> dict[str, Any]:
    """`obj` with status.gpuPools as its composition publishes them, the GPU count optionally overridden."""
    pools = api.gpu_pools_status(obj)
    if gpus is not None:
        for pool in pools:
            for device in pool["devices"]:
                device["count"] = gpus
    return {**obj, "status": {"gpuPools": pools}}


def modelplane_replica(
    cluster_name: str,
    *,
    name: str,
    deployment: str | None = "llama",
    namespace: str = "team-a",
    index: str | None = None,
    composed_as: str | None = None,
) -> dict[str, Any]:
    """A ModelReplica as Modelplane v0.3.1 composes it (compose-model-deployment fn.py), as observed."""
    labels = {"modelplane.ai/cluster": cluster_name}
    if deployment is not None:
        labels["modelplane.ai/deployment"] = deployment
    if index is not None:
        labels["modelplane.ai/replica-index"] = index
    metadata: dict[str, Any] = {"name": name, "namespace": namespace, "labels": labels}
    if composed_as is not None:
        metadata["annotations"] = {"crossplane.io/composition-resource-name": composed_as}
    member = {
        "role": "Standalone",
        "nodePoolName": "pool",
        "deviceRequests": [
            {"name": "gpu", "deviceClassName": "gpu.nvidia.com", "count": 1, "selectors": [{"cel": H100}]}
        ],
        "template": {"spec": {"containers": [{"name": "engine", "image": IMAGE}]}},
    }
    spec = {"clusterName": cluster_name, "engines": [{"name": "main", "copies": 1, "members": [member]}]}
    return with_ready(
        {"apiVersion": "modelplane.ai/v1alpha1", "kind": "ModelReplica", "metadata": metadata, "spec": spec}
    )


def scheduled(n: int, of: int) -> dict[str, str]:
    return condition("ReplicasScheduled", "True", "Scheduled", f"Scheduled {n} of {of} replicas.")


def ready(n: int, of: int) -> dict[str, str]:
    if n >= of:
        return condition("ReplicasReady", "True", "AllReplicasReady", f"{n} of {of} replicas are ready.")
    return condition("ReplicasReady", "False", "ReplicasNotReady", f"{n} of {of} replicas are ready.")


def placed(*where: str) -> dict[str, str]:
    names = ", ".join(f"{replica_name('llama', c, 0)} on {c}" for c in where)
    noun = "replica" if len(where) == 1 else "replicas"
    return result("NORMAL", "ReplicasPlaced", f"Placed {len(where)} new {noun}: {names}.")


ONE_NODE = 1
LEGACY = modelplane_replica("a", name="legacy-7f3a1", deployment="legacy", namespace="team-b")
OWN = modelplane_replica("a", name="llama-5c2e9", composed_as="replica-a-0")
UNLABELLED = modelplane_replica("a", name="llama-5c2e9", deployment=None, composed_as="replica-a-0")
RETAINED_OWN = {**replica("a"), "metadata": {**replica("a")["metadata"], "name": "llama-5c2e9"}}
OWN_PLACEMENT = {**placement_entry("a"), "name": "llama-5c2e9"}
DEPLOYMENT_CASES = [
    Case(
        name="a published device count of 0 is no devices, not an invalid cluster",
        req=request(
            deployment(), required=resolved(clusters=[published(cluster("a"), gpus=0), published(cluster("b"))])
        ),
        want=response(
            rollout=Rollout(desired=1),
            status={"replicas": {"total": 1, "ready": 0}, "placement": [placement_entry("b")]},
            resources={"replica-b-0": (replica("b"), False)},
            conditions=[scheduled(1, 1), ready(0, 1)],
            results=[placed("b")],
            requirements=MD_REQUIREMENTS,
        ),
    ),
    Case(
        name="a replica whose pool now publishes 0 devices is re-placed, and kept until its successor is Ready",
        req=request(
            deployment(),
            observed={"replica-a-0": with_ready(replica("a"))},
            required=resolved(clusters=[published(cluster("a"), gpus=0), published(cluster("b"))]),
        ),
        want=response(
            rollout=Rollout(desired=1),
            status={"replicas": {"total": 2, "ready": 1}, "placement": [placement_entry("a"), placement_entry("b")]},
            resources={"replica-a-0": (replica("a"), True), "replica-b-0": (replica("b"), False)},
            conditions=[scheduled(1, 1), ready(1, 1)],
            results=[placed("b")],
            requirements=MD_REQUIREMENTS,
        ),
    ),
    Case(
        name="another deployment's Modelplane replica takes its node in the ledger",
        req=request(
            deployment(replicas=2),
            required=resolved(clusters=[cluster("a", nodes=ONE_NODE), cluster("b", nodes=ONE_NODE)], replicas=[LEGACY]),
        ),
        want=response(
            rollout=Rollout(desired=2),
            status={
                "replicas": {"total": 1, "ready": 0},
                "placement": [placement_entry("b")],
                "unplaced": {
                    "count": 1,
                    "summary": "0/2 clusters are available: 2 had no pool with enough free nodes.",
                    "clusters": [
                        {
                            "cluster": "a",
                            "reason": "had no pool with enough free nodes",
                            "detail": "pool pool: 0 free nodes, engine main needs 1",
                        },
                        {
                            "cluster": "b",
                            "reason": "had no pool with enough free nodes",
                            "detail": "pool pool: 0 free nodes, engine main needs 1",
                        },
                    ],
                },
            },
            resources={"replica-b-0": (replica("b"), False)},
            conditions=[
                condition(
                    "ReplicasScheduled",
                    "False",
                    "InsufficientCapacity",
                    "Scheduled 1 of 2 replicas; 0/2 clusters are available for the rest: "
                    "2 had no pool with enough free nodes.",
                ),
                ready(0, 2),
            ],
            results=[
                result(
                    "WARNING",
                    "InsufficientCapacity",
                    "Scheduled 1 of 2 replicas; 0/2 clusters are available for the rest: "
                    "2 had no pool with enough free nodes.",
                ),
                placed("b"),
            ],
            requirements=MD_REQUIREMENTS,
        ),
    ),
    Case(
        name="this deployment's own Modelplane replica is retained under its name and key",
        req=request(
            deployment(),
            observed={"replica-a-0": OWN},
            required=resolved(clusters=[cluster("a"), cluster("b")], replicas=[OWN]),
        ),
        want=response(
            rollout=Rollout(desired=1),
            status={"replicas": {"total": 1, "ready": 1}, "placement": [OWN_PLACEMENT]},
            resources={"replica-a-0": (RETAINED_OWN, True)},
            conditions=[scheduled(1, 1), ready(1, 1)],
            requirements=MD_REQUIREMENTS,
        ),
    ),
    Case(
        name="a replica this deployment composes stays its own without a deployment label",
        req=request(
            deployment(),
            observed={"replica-a-0": UNLABELLED},
            required=resolved(clusters=[cluster("a"), cluster("b")], replicas=[UNLABELLED]),
        ),
        want=response(
            rollout=Rollout(desired=1),
            status={"replicas": {"total": 1, "ready": 1}, "placement": [OWN_PLACEMENT]},
            resources={"replica-a-0": (RETAINED_OWN, True)},
            conditions=[scheduled(1, 1), ready(1, 1)],
            requirements=MD_REQUIREMENTS,
        ),
    ),
    Case(
        name="the note is withdrawn once no field without effect is set",
        req=request(
            deployment(status={"conditions": [{"type": "FieldsIgnored", "status": "True", "reason": "NoEffectHere"}]}),
            required=resolved(clusters=[cluster("a")]),
        ),
        want=response(
            rollout=Rollout(desired=1),
            status={"replicas": {"total": 1, "ready": 0}, "placement": [placement_entry("a")]},
            resources={"replica-a-0": (replica("a"), False)},
            conditions=[
                condition("FieldsIgnored", "False", "AllFieldsUsed", "Every field set takes effect."),
                scheduled(1, 1),
                ready(0, 1),
            ],
            results=[placed("a")],
            requirements=MD_REQUIREMENTS,
        ),
    ),
]


@pytest.mark.parametrize("case", DEPLOYMENT_CASES, ids=lambda c: c.name)
def test_deployment_over_a_modelplane_fleet(run_function, case: Case) -> None:
    assert as_dict(run_function(case.req)) == case.want


@dataclass(frozen=True)
class IndexCase:
    name: str
    label: str
    shown: str


INDEX_CASES = [
    IndexCase("a superscript two", "\u00b2", "'\u00b2'"),
    IndexCase("an Arabic-Indic digit one", "\u0661", "'\u0661'"),
    IndexCase("5,000 digits", "9" * 5000, f"'{'9' * 31}... (5002 characters)"),
    IndexCase("an index beyond 99999", "100000", "'100000'"),
]


@pytest.mark.parametrize("case", INDEX_CASES, ids=lambda c: c.name)
def test_a_replica_index_that_is_not_an_ascii_number_is_invalid_spec_not_a_fatal_error(
    run_function, case: IndexCase
) -> None:
    """The deployment's own replica carries the label: it is kept, and InvalidSpec names the label."""
    own = with_ready(replica("a"))
    own["metadata"]["labels"]["modelplane.ai/replica-index"] = case.label
    message = (
        f"ModelReplica team-a/{replica_name('llama', 'a', 0)}: metadata.labels[modelplane.ai/replica-index]: "
        f"must be a decimal number from 0 to 99999 in ASCII digits, got {case.shown}"
    )
    kept = {**replica("a"), "metadata": {**replica("a")["metadata"], "labels": own["metadata"]["labels"]}}
    want = response(
        status={"replicas": {"total": 1, "ready": 1}},
        resources={"replica-a-0": (kept, True)},
        conditions=[condition("ReplicasScheduled", "False", "InvalidSpec", message), ready(1, 1)],
        results=[result("WARNING", "InvalidSpec", message)],
        requirements=MD_REQUIREMENTS,
    )
    req = request(
        deployment(), observed={"replica-a-0": own}, required=resolved(clusters=[cluster("a")], replicas=[own])
    )
    assert as_dict(run_function(req)) == want
