"""Tenant isolation end to end over gRPC: InferenceCluster allowedNamespaces / allowedNamespaceSelector.

The function reads the deployment's Namespace (a declared requirement) for its labels. A cluster
admits a namespace when it restricts nothing, names it, or selects its labels; a cluster that stops
admitting a namespace evicts that namespace's replicas as a NoExecute drain does.
"""

from dataclasses import dataclass
from typing import Any

import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane.names import replica_name
from modelplane.scheduler.filters import REASON_NAMESPACE_NOT_ADMITTED
from modelplane.scheduler.retain import REASON_NAMESPACE_NOT_ADMITTED as REASON_NO_LONGER_ADMITTED

from tests.function.conftest import as_dict
from tests.function.factories import cluster, deployment, namespace, request, resolved, with_ready
from tests.function.wants import MD_REQUIREMENTS, condition, placement_entry, replica, response, result

from .conftest import RunFunction

NOT_ADMITTED_DETAIL = "namespace team-a is not in allowedNamespaces or allowedNamespaceSelector"


def tenant_cluster(
    name: str, *, allowed: list[str] | None = None, selector: dict[str, Any] | None = None
) -> dict[str, Any]:
    obj = cluster(name)
    if allowed is not None:
        obj["spec"]["allowedNamespaces"] = allowed
    if selector is not None:
        obj["spec"]["allowedNamespaceSelector"] = selector
    return obj


def observed_replica(cluster_name: str) -> dict[str, Any]:
    obj = with_ready(replica(cluster_name))
    obj["metadata"] = {
        **obj["metadata"],
        "annotations": {"crossplane.io/composition-resource-name": f"replica-{cluster_name}-0"},
    }
    return obj


def scheduled(n: int) -> dict[str, str]:
    return condition("ReplicasScheduled", "True", "Scheduled", f"Scheduled {n} of {n} replicas.")


def placed_on(name: str) -> dict[str, Any]:
    """The whole response for one fresh replica placed on cluster `name`."""
    return response(
        status={"replicas": {"total": 1, "ready": 0}, "placement": [placement_entry(name)]},
        resources={f"replica-{name}-0": (replica(name), False)},
        conditions=[
            scheduled(1),
            condition("ReplicasReady", "False", "ReplicasNotReady", "0 of 1 replicas are ready."),
        ],
        results=[
            result("NORMAL", "ReplicasPlaced", f"Placed 1 new replica: {replica_name('llama', name, 0)} on {name}.")
        ],
        requirements=MD_REQUIREMENTS,
    )


def refused_by(name: str) -> dict[str, Any]:
    """The whole response when cluster `name` (the only one) does not admit team-a."""
    message = f"Scheduled 0 of 1 replicas; 0/1 clusters are available for the rest: 1 {REASON_NAMESPACE_NOT_ADMITTED}."
    return response(
        status={
            "replicas": {"total": 0, "ready": 0},
            "placement": [],
            "unplaced": {
                "count": 1,
                "summary": f"0/1 clusters are available: 1 {REASON_NAMESPACE_NOT_ADMITTED}.",
                "clusters": [{"cluster": name, "reason": REASON_NAMESPACE_NOT_ADMITTED, "detail": NOT_ADMITTED_DETAIL}],
            },
        },
        conditions=[
            condition("ReplicasScheduled", "False", "NoSuitableCluster", message),
            condition("ReplicasReady", "False", "ReplicasNotReady", "0 of 1 replicas are ready."),
        ],
        results=[result("WARNING", "NoSuitableCluster", message)],
        requirements=MD_REQUIREMENTS,
    )


@dataclass(frozen=True)
class Case:
    name: str
    req: fnv1.RunFunctionRequest
    want: dict[str, Any]


def fresh(c: dict[str, Any], *, labels: dict[str, str] | None = None) -> fnv1.RunFunctionRequest:
    return request(deployment(), required=resolved(clusters=[c], ns=namespace(labels=labels)))


TENANT = {"matchLabels": {"tenant": "a"}}
MOVED = f"Removed 1 replica: {replica_name('llama', 'a', 0)} from a ({{reason}})."

CASES = [
    Case(
        name="a cluster restricting nothing admits every namespace",
        req=fresh(tenant_cluster("a")),
        want=placed_on("a"),
    ),
    Case(
        name="a cluster naming the namespace admits it",
        req=fresh(tenant_cluster("a", allowed=["team-b", "team-a"])),
        want=placed_on("a"),
    ),
    Case(
        name="a cluster naming only other namespaces gets no replica and the diagnosis counts it",
        req=fresh(tenant_cluster("a", allowed=["team-b"])),
        want=refused_by("a"),
    ),
    Case(
        name="an empty allowedNamespaces list admits no namespace",
        req=fresh(tenant_cluster("a", allowed=[])),
        want=refused_by("a"),
    ),
    Case(
        name="a namespace selector matching the Namespace's labels admits it",
        req=fresh(tenant_cluster("a", selector=TENANT), labels={"tenant": "a"}),
        want=placed_on("a"),
    ),
    Case(
        name="a namespace selector not matching the Namespace's labels refuses it",
        req=fresh(tenant_cluster("a", selector=TENANT), labels={"tenant": "b"}),
        want=refused_by("a"),
    ),
    Case(
        name="a namespace selector with matchExpressions is applied to the Namespace's labels",
        req=fresh(
            tenant_cluster(
                "a", selector={"matchExpressions": [{"key": "tenant", "operator": "NotIn", "values": ["a"]}]}
            ),
            labels={"tenant": "a"},
        ),
        want=refused_by("a"),
    ),
    Case(
        name="with both set, the name list alone admitting is enough",
        req=fresh(tenant_cluster("a", allowed=["team-a"], selector=TENANT), labels={"tenant": "b"}),
        want=placed_on("a"),
    ),
    Case(
        name="with both set, the selector alone admitting is enough",
        req=fresh(tenant_cluster("a", allowed=["team-b"], selector=TENANT), labels={"tenant": "a"}),
        want=placed_on("a"),
    ),
    Case(
        name="with both set and neither admitting, the namespace is refused",
        req=fresh(tenant_cluster("a", allowed=["team-b"], selector=TENANT), labels={"tenant": "b"}),
        want=refused_by("a"),
    ),
    Case(
        name="a non-admitted cluster is skipped for an admitting one",
        req=request(
            deployment(),
            required=resolved(
                clusters=[tenant_cluster("a", allowed=["team-b"]), tenant_cluster("b", allowed=["team-a"])]
            ),
        ),
        want=placed_on("b"),
    ),
    Case(
        name="a replica on a cluster that stops naming its namespace is re-placed like a NoExecute drain",
        req=request(
            deployment(),
            observed={"replica-a-0": observed_replica("a")},
            required=resolved(
                clusters=[tenant_cluster("a", allowed=["team-b"]), tenant_cluster("b")],
                replicas=[observed_replica("a")],
            ),
        ),
        want={
            **placed_on("b"),
            "results": [
                result("NORMAL", "ReplicasPlaced", f"Placed 1 new replica: {replica_name('llama', 'b', 0)} on b."),
                result("NORMAL", "ReplicasRemoved", MOVED.format(reason=REASON_NO_LONGER_ADMITTED)),
            ],
        },
    ),
    Case(
        name="a replica whose Namespace loses the selected label is re-placed",
        req=request(
            deployment(),
            observed={"replica-a-0": observed_replica("a")},
            required=resolved(
                clusters=[tenant_cluster("a", selector=TENANT), tenant_cluster("b")],
                replicas=[observed_replica("a")],
                ns=namespace(labels={"tenant": "gone"}),
            ),
        ),
        want={
            **placed_on("b"),
            "results": [
                result("NORMAL", "ReplicasPlaced", f"Placed 1 new replica: {replica_name('llama', 'b', 0)} on b."),
                result("NORMAL", "ReplicasRemoved", MOVED.format(reason=REASON_NO_LONGER_ADMITTED)),
            ],
        },
    ),
    Case(
        name="a replica on a cluster that still admits its namespace stays put",
        req=request(
            deployment(),
            observed={"replica-a-0": observed_replica("a")},
            required=resolved(
                clusters=[tenant_cluster("a", allowed=["team-a"]), tenant_cluster("b")],
                replicas=[observed_replica("a")],
            ),
        ),
        want=response(
            status={"replicas": {"total": 1, "ready": 1}, "placement": [placement_entry("a")]},
            resources={"replica-a-0": (replica("a"), True)},
            conditions=[
                scheduled(1),
                condition("ReplicasReady", "True", "AllReplicasReady", "1 of 1 replicas are ready."),
            ],
            requirements=MD_REQUIREMENTS,
        ),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_tenant_isolation(grpc_function: RunFunction, case: Case) -> None:
    assert as_dict(grpc_function(case.req)) == case.want


def test_the_namespace_is_a_declared_requirement_of_every_call(grpc_function: RunFunction) -> None:
    """Without the Namespace answered the function decides nothing and keeps what exists."""
    req = request(
        deployment(),
        observed={"replica-a-0": observed_replica("a")},
        required={"clusters": [tenant_cluster("a", allowed=["team-b"])], "replicas": []},
    )
    got = as_dict(grpc_function(req))
    assert got == response(
        status={"replicas": {"total": 1, "ready": 1}},
        resources={"replica-a-0": (replica("a"), True)},
        requirements=MD_REQUIREMENTS,
    )
