"""ModelDeployment over real gRPC: placement, retention, re-placement and every failure mode.

Each case compares the whole response. Failure cases start from an existing replica and check that
it is kept (re-emitted minimally, still ready) while the condition says what is wrong.
"""

import copy
from typing import Any

import pytest
from modelplane import api
from modelplane.errors import SpecError
from modelplane.names import replica_name
from modelplane.scheduler import schedule
from modelplane.scheduler.filters import REASON_NO_CAPACITY
from modelplane.scheduler.retain import REASON_CLUSTER_DELETED, REASON_NO_EXECUTE_TAINT, REASON_SCALED_DOWN

from .conftest import as_dict
from .factories import Case, cluster, deployment, request, resolved, with_ready
from .wants import MD_REQUIREMENTS, Rollout, condition, placement_entry, replica, response, result, revision_of


def rn(cluster_name: str, index: int) -> str:
    return replica_name("llama", cluster_name, index)


BAD_CEL = 'device.driver == "gpu.nvidia.com" &&'
DRAIN = {"key": "drain", "value": "true", "effect": "NoExecute"}
R8 = revision_of(gpus=8)  # of deployment(gpus=8)


def observed_replica(cluster_name: str, index: int = 0, *, ready: str = "True", **kw: Any) -> dict[str, Any]:
    """An existing ModelReplica as Crossplane reports it: server-set metadata, spec.crossplane, status."""
    obj = with_ready(replica(cluster_name, index, **kw), ready)
    obj["metadata"] = {
        **obj["metadata"],
        "uid": "0b5e-uid",
        "resourceVersion": "42",
        "annotations": {"crossplane.io/composition-resource-name": f"replica-{cluster_name}-{index}"},
    }
    obj["spec"] = {**obj["spec"], "crossplane": {"compositionRef": {"name": "modelreplicas.modelplane.ai"}}}
    return obj


def spec_error(xr: dict[str, Any], clusters: list[dict[str, Any]]) -> str:
    """The lib's own message for a spec the function must reject (the function only relays it)."""
    with pytest.raises(SpecError) as e:
        schedule(api.parse_deployment(xr), [api.parse_cluster(c) for c in clusters], [])
    return str(e.value)


def scheduled(n: int, of: int) -> dict[str, str]:
    return condition("ReplicasScheduled", "True", "Scheduled", f"Scheduled {n} of {of} replicas.")


def ready(n: int, of: int) -> dict[str, str]:
    if n >= of:
        return condition("ReplicasReady", "True", "AllReplicasReady", f"{n} of {of} replicas are ready.")
    return condition("ReplicasReady", "False", "ReplicasNotReady", f"{n} of {of} replicas are ready.")


KEPT = {"replica-a-0": (replica("a"), True)}  # what retain-only re-emits for observed_replica("a")
PREVIOUS_STATUS = {"placement": [placement_entry("a")], "replicas": {"total": 1, "ready": 1}}
BAD_SPEC = deployment(status=PREVIOUS_STATUS)
BAD_SPEC["spec"]["template"]["spec"]["engines"][0]["copies"] = 0  # copies is 1..64
BAD_SELECTOR = deployment(cel=BAD_CEL, status=PREVIOUS_STATUS)
DEVICE_PLUGIN_GPU = {"limits": {"nvidia.com/gpu": 1}}  # placement counts only the member's DRA claim
BAD_RESOURCES = deployment(status=PREVIOUS_STATUS)
BAD_RESOURCES["spec"]["template"]["spec"]["engines"][0]["members"][0]["template"]["spec"]["containers"][0][
    "resources"
] = DEVICE_PLUGIN_GPU


def with_device_plugin_gpu(obj: dict[str, Any]) -> dict[str, Any]:
    """A replica as an older version composed it from a spec with a device-plugin GPU."""
    out = copy.deepcopy(obj)
    out["spec"]["engines"][0]["members"][0]["template"]["spec"]["containers"][0]["resources"] = DEVICE_PLUGIN_GPU
    return out


LEGACY = with_device_plugin_gpu(observed_replica("a"))

CASES = [
    Case(
        name="fresh placement spreads two replicas over two clusters",
        req=request(deployment(replicas=2), required=resolved(clusters=[cluster("a"), cluster("b")])),
        want=response(
            rollout=Rollout(desired=2),
            status={"replicas": {"total": 2, "ready": 0}, "placement": [placement_entry("a"), placement_entry("b")]},
            resources={"replica-a-0": (replica("a"), False), "replica-b-0": (replica("b"), False)},
            conditions=[scheduled(2, 2), ready(0, 2)],
            results=[
                result("NORMAL", "ReplicasPlaced", f"Placed 2 new replicas: {rn('a', 0)} on a, {rn('b', 0)} on b.")
            ],
            requirements=MD_REQUIREMENTS,
        ),
    ),
    Case(
        name="a ready replica is retained and reported ready without events",
        req=request(
            deployment(),
            observed={"replica-a-0": observed_replica("a")},
            required=resolved(clusters=[cluster("a"), cluster("b")], replicas=[observed_replica("a")]),
        ),
        want=response(
            rollout=Rollout(desired=1),
            status={"replicas": {"total": 1, "ready": 1}, "placement": [placement_entry("a")]},
            resources=KEPT,
            conditions=[scheduled(1, 1), ready(1, 1)],
            requirements=MD_REQUIREMENTS,
        ),
    ),
    Case(
        name="an observed replica missing from the required list is still retained",
        req=request(
            deployment(),
            observed={"replica-a-0": observed_replica("a")},
            required=resolved(clusters=[cluster("a"), cluster("b")]),
        ),
        want=response(
            rollout=Rollout(desired=1),
            status={"replicas": {"total": 1, "ready": 1}, "placement": [placement_entry("a")]},
            resources=KEPT,
            conditions=[scheduled(1, 1), ready(1, 1)],
            requirements=MD_REQUIREMENTS,
        ),
    ),
    Case(
        name="the replica of a deleted cluster is re-placed on another cluster",
        req=request(
            deployment(replicas=2),
            observed={"replica-a-0": observed_replica("a"), "replica-b-0": observed_replica("b")},
            required=resolved(clusters=[cluster("b"), cluster("c")]),
        ),
        want=response(
            rollout=Rollout(desired=2),
            status={"replicas": {"total": 2, "ready": 1}, "placement": [placement_entry("b"), placement_entry("c")]},
            resources={"replica-b-0": (replica("b"), True), "replica-c-0": (replica("c"), False)},
            conditions=[scheduled(2, 2), ready(1, 2)],
            results=[
                result("NORMAL", "ReplicasPlaced", f"Placed 1 new replica: {rn('c', 0)} on c."),
                result(
                    "NORMAL", "ReplicasRemoved", f"Removed 1 replica: {rn('a', 0)} from a ({REASON_CLUSTER_DELETED})."
                ),
            ],
            requirements=MD_REQUIREMENTS,
        ),
    ),
    Case(
        name="a drained cluster (NoExecute taint) keeps its Ready replica until a successor elsewhere is Ready",
        req=request(
            deployment(),
            observed={"replica-a-0": observed_replica("a")},
            required=resolved(clusters=[cluster("a", taints=[DRAIN]), cluster("b")]),
        ),
        want=response(
            rollout=Rollout(desired=1),
            status={"replicas": {"total": 2, "ready": 1}, "placement": [placement_entry("a"), placement_entry("b")]},
            resources={"replica-a-0": (replica("a"), True), "replica-b-0": (replica("b"), False)},
            conditions=[scheduled(1, 1), ready(1, 1)],
            results=[result("NORMAL", "ReplicasPlaced", f"Placed 1 new replica: {rn('b', 0)} on b.")],
            requirements=MD_REQUIREMENTS,
        ),
    ),
    Case(
        name="a drained cluster's replica leaves once its successor is Ready",
        req=request(
            deployment(),
            observed={"replica-a-0": observed_replica("a"), "replica-b-0": observed_replica("b")},
            required=resolved(clusters=[cluster("a", taints=[DRAIN]), cluster("b")]),
        ),
        want=response(
            rollout=Rollout(desired=1),
            status={"replicas": {"total": 1, "ready": 1}, "placement": [placement_entry("b")]},
            resources={"replica-b-0": (replica("b"), True)},
            conditions=[scheduled(1, 1), ready(1, 1)],
            results=[
                result(
                    "NORMAL", "ReplicasRemoved", f"Removed 1 replica: {rn('a', 0)} from a ({REASON_NO_EXECUTE_TAINT})."
                ),
            ],
            requirements=MD_REQUIREMENTS,
        ),
    ),
    Case(
        name="a drained cluster's replica that is not Ready is replaced at once",
        req=request(
            deployment(),
            observed={"replica-a-0": observed_replica("a", ready="False")},
            required=resolved(clusters=[cluster("a", taints=[DRAIN]), cluster("b")]),
        ),
        want=response(
            rollout=Rollout(desired=1),
            status={"replicas": {"total": 1, "ready": 0}, "placement": [placement_entry("b")]},
            resources={"replica-b-0": (replica("b"), False)},
            conditions=[scheduled(1, 1), ready(0, 1)],
            results=[
                result("NORMAL", "ReplicasPlaced", f"Placed 1 new replica: {rn('b', 0)} on b."),
                result(
                    "NORMAL", "ReplicasRemoved", f"Removed 1 replica: {rn('a', 0)} from a ({REASON_NO_EXECUTE_TAINT})."
                ),
            ],
            requirements=MD_REQUIREMENTS,
        ),
    ),
    Case(
        name="partial placement says how many replicas were placed and why the rest were not",
        req=request(deployment(replicas=3, gpus=8), required=resolved(clusters=[cluster("a", nodes=2)])),
        want=response(
            rollout=Rollout(desired=3, revision=R8),
            status={
                "replicas": {"total": 2, "ready": 0},
                "placement": [placement_entry("a", 0, revision=R8), placement_entry("a", 1, revision=R8)],
                "unplaced": {
                    "count": 1,
                    "summary": f"0/1 clusters are available: 1 {REASON_NO_CAPACITY}.",
                    "clusters": [
                        {
                            "cluster": "a",
                            "reason": REASON_NO_CAPACITY,
                            "detail": "pool pool: 0 free nodes, engine main needs 1",
                        }
                    ],
                },
            },
            resources={
                "replica-a-0": (replica("a", 0, gpus=8), False),
                "replica-a-1": (replica("a", 1, gpus=8), False),
            },
            conditions=[
                condition(
                    "ReplicasScheduled",
                    "False",
                    "InsufficientCapacity",
                    f"Scheduled 2 of 3 replicas; 0/1 clusters are available for the rest: 1 {REASON_NO_CAPACITY}.",
                ),
                ready(0, 3),
            ],
            results=[
                result(
                    "WARNING",
                    "InsufficientCapacity",
                    f"Scheduled 2 of 3 replicas; 0/1 clusters are available for the rest: 1 {REASON_NO_CAPACITY}.",
                ),
                result("NORMAL", "ReplicasPlaced", f"Placed 2 new replicas: {rn('a', 0)} on a, {rn('a', 1)} on a."),
            ],
            requirements=MD_REQUIREMENTS,
        ),
    ),
    Case(
        name="numbers written as floats schedule exactly like integers",
        req=request(
            deployment(replicas=2.0, gpus=8.0), required=resolved(clusters=[cluster("a", nodes=2.0, gpus_per_node=8.0)])
        ),
        want=response(
            rollout=Rollout(desired=2, revision=R8),
            status={
                "replicas": {"total": 2, "ready": 0},
                "placement": [placement_entry("a", 0, revision=R8), placement_entry("a", 1, revision=R8)],
            },
            resources={
                "replica-a-0": (replica("a", 0, gpus=8), False),
                "replica-a-1": (replica("a", 1, gpus=8), False),
            },
            conditions=[scheduled(2, 2), ready(0, 2)],
            results=[
                result("NORMAL", "ReplicasPlaced", f"Placed 2 new replicas: {rn('a', 0)} on a, {rn('a', 1)} on a.")
            ],
            requirements=MD_REQUIREMENTS,
        ),
    ),
    Case(
        name="scaling to zero removes replicas even when no cluster is left",
        req=request(deployment(replicas=0), observed={"replica-a-0": observed_replica("a")}, required=resolved()),
        want=response(
            rollout=Rollout(desired=0),
            status={"replicas": {"total": 0, "ready": 0}, "placement": []},
            conditions=[
                condition("ReplicasScheduled", "True", "ScaledToZero", "Scheduled 0 of 0 replicas."),
                ready(0, 0),
            ],
            results=[
                result(
                    "NORMAL", "ReplicasRemoved", f"Removed 1 replica: {rn('a', 0)} from a ({REASON_CLUSTER_DELETED})."
                )
            ],
            requirements=MD_REQUIREMENTS,
        ),
    ),
    Case(
        name="scaling to zero removes the replicas of a live cluster as scaled down",
        req=request(
            deployment(replicas=0),
            observed={"replica-a-0": observed_replica("a")},
            required=resolved(clusters=[cluster("a")]),
        ),
        want=response(
            rollout=Rollout(desired=0),
            status={"replicas": {"total": 0, "ready": 0}, "placement": []},
            conditions=[
                condition("ReplicasScheduled", "True", "ScaledToZero", "Scheduled 0 of 0 replicas."),
                ready(0, 0),
            ],
            results=[
                result("NORMAL", "ReplicasRemoved", f"Removed 1 replica: {rn('a', 0)} from a ({REASON_SCALED_DOWN}).")
            ],
            requirements=MD_REQUIREMENTS,
        ),
    ),
    Case(
        name="unresolved requirements keep the existing replicas and only ask for the fleet",
        req=request(deployment(status=PREVIOUS_STATUS), observed={"replica-a-0": observed_replica("a")}),
        want=response(status=PREVIOUS_STATUS, resources=KEPT, requirements=MD_REQUIREMENTS, ready=True),
    ),
    Case(
        name="an empty fleet keeps the existing replicas and reports NoClusters without blaming a selector",
        req=request(
            deployment(status=PREVIOUS_STATUS), observed={"replica-a-0": observed_replica("a")}, required=resolved()
        ),
        want=response(
            status=PREVIOUS_STATUS,
            resources=KEPT,
            conditions=[
                condition(
                    "ReplicasScheduled", "False", "NoClusters", "no InferenceCluster exists to place replicas on"
                ),
                ready(1, 1),
            ],
            results=[result("WARNING", "NoClusters", "no InferenceCluster exists to place replicas on")],
            requirements=MD_REQUIREMENTS,
        ),
    ),
    Case(
        name="no cluster matching the clusterSelector keeps the existing replicas and reports NoClusters",
        req=request(
            deployment(status=PREVIOUS_STATUS, match_labels={"region": "mars"}),
            observed={"replica-a-0": observed_replica("a")},
            required=resolved(),
        ),
        want=response(
            status=PREVIOUS_STATUS,
            resources=KEPT,
            conditions=[
                condition(
                    "ReplicasScheduled",
                    "False",
                    "NoClusters",
                    "no InferenceCluster matches the deployment's clusterSelector",
                ),
                ready(1, 1),
            ],
            results=[result("WARNING", "NoClusters", "no InferenceCluster matches the deployment's clusterSelector")],
            # every cluster is read, not only those matchLabels pick: other deployments' demand may use them
            requirements=MD_REQUIREMENTS,
        ),
    ),
    Case(
        name="a device selector that does not compile keeps the existing replicas and reports InvalidNodeSelector",
        req=request(
            BAD_SELECTOR, observed={"replica-a-0": observed_replica("a")}, required=resolved(clusters=[cluster("b")])
        ),
        want=response(
            status=PREVIOUS_STATUS,
            resources=KEPT,
            conditions=[
                condition(
                    "ReplicasScheduled", "False", "InvalidNodeSelector", spec_error(BAD_SELECTOR, [cluster("b")])
                ),
                ready(1, 1),
            ],
            results=[result("WARNING", "InvalidNodeSelector", spec_error(BAD_SELECTOR, [cluster("b")]))],
            requirements=MD_REQUIREMENTS,
        ),
    ),
    Case(
        name="an invalid spec keeps the existing replicas and reports InvalidSpec",
        req=request(
            BAD_SPEC, observed={"replica-a-0": observed_replica("a")}, required=resolved(clusters=[cluster("b")])
        ),
        want=response(
            status=PREVIOUS_STATUS,
            resources=KEPT,
            conditions=[
                condition("ReplicasScheduled", "False", "InvalidSpec", spec_error(BAD_SPEC, [cluster("b")])),
                ready(1, 1),
            ],
            results=[result("WARNING", "InvalidSpec", spec_error(BAD_SPEC, [cluster("b")]))],
            requirements=MD_REQUIREMENTS,
        ),
    ),
    Case(
        name="a device-plugin GPU beside the DRA claim keeps the existing replicas and reports InvalidSpec",
        req=request(
            BAD_RESOURCES, observed={"replica-a-0": observed_replica("a")}, required=resolved(clusters=[cluster("b")])
        ),
        want=response(
            status=PREVIOUS_STATUS,
            resources=KEPT,
            conditions=[
                condition("ReplicasScheduled", "False", "InvalidSpec", spec_error(BAD_RESOURCES, [cluster("b")])),
                ready(1, 1),
            ],
            results=[result("WARNING", "InvalidSpec", spec_error(BAD_RESOURCES, [cluster("b")]))],
            requirements=MD_REQUIREMENTS,
        ),
    ),
    Case(
        name="a replica composed with a device-plugin GPU before it was refused is read, and re-emitted without it",
        req=request(
            deployment(),
            observed={"replica-a-0": LEGACY},
            required=resolved(clusters=[cluster("a"), cluster("b")], replicas=[LEGACY]),
        ),
        want=response(
            rollout=Rollout(desired=1),
            status={"replicas": {"total": 1, "ready": 1}, "placement": [placement_entry("a")]},
            resources=KEPT,
            conditions=[scheduled(1, 1), ready(1, 1)],
            requirements=MD_REQUIREMENTS,
        ),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_model_deployment(run_function, case: Case) -> None:
    assert as_dict(run_function(case.req)) == case.want


def test_a_failure_already_reported_raises_no_second_warning(run_function) -> None:
    """Events go out on transitions: an XR already showing the condition gets the condition, no event."""
    first = as_dict(run_function(request(deployment(), required=resolved())))
    shown = deployment(
        status={
            "conditions": [
                {**c, "status": c["status"].removeprefix("STATUS_CONDITION_").title()} for c in first["conditions"]
            ]
        }
    )
    again = as_dict(run_function(request(shown, required=resolved())))
    assert (again.get("results"), again["conditions"]) == (None, first["conditions"])
