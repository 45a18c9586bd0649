"""Tenant isolation end to end over gRPC: InferenceCluster allowedNamespaces / allowedNamespaceSelector.

The ModelReplica handler checks admission too (a hand-made replica in a namespace the cluster does not
admit renders nothing there), and the ledger does not charge such a replica.

The function reads the deployment's Namespace (a declared requirement) for its labels. A cluster
admits a namespace when it restricts nothing, names it, or selects its labels; a cluster that stops
admitting a namespace evicts that namespace's replicas as a NoExecute drain does.
"""

from dataclasses import dataclass
from typing import Any

import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane import api
from modelplane.names import replica_name
from modelplane.render import render_replica
from modelplane.scheduler.filters import REASON_NAMESPACE_NOT_ADMITTED, REASON_NO_CAPACITY
from modelplane.scheduler.retain import REASON_NAMESPACE_NOT_ADMITTED as REASON_NO_LONGER_ADMITTED

from tests.function.conftest import as_dict
from tests.function.factories import cluster, deployment, namespace, replica_resolved, request, resolved, with_ready
from tests.function.wants import (
    MD_REQUIREMENTS,
    RENDERED,
    Rollout,
    condition,
    mr_requirements,
    placement_entry,
    replica,
    response,
    result,
)

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
        rollout=Rollout(desired=1),
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
        rollout=Rollout(desired=1),
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
            rollout=Rollout(desired=1),
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
        ready=True,
    )


def squatter(cluster_name: str, *, refused: bool = False) -> dict[str, Any]:
    """A hand-made ModelReplica in namespace team-evil holding the only node of `cluster_name`'s pool."""
    obj = replica(cluster_name, deployment="squat", namespace="team-evil", gpus=8)
    if refused:  # what its own handler reports once it found the cluster does not admit team-evil
        obj["status"] = {
            "conditions": [{"type": "ReplicaRendered", "status": "False", "reason": "NamespaceNotAdmitted"}]
        }
    return obj


def private(name: str, **spec: Any) -> dict[str, Any]:
    obj = cluster(name, nodes=1)
    obj["spec"].update(spec)
    return obj


def full(name: str) -> dict[str, Any]:
    """The whole response when cluster `name` (the only one) has no free node."""
    message = f"Scheduled 0 of 1 replicas; 0/1 clusters are available for the rest: 1 {REASON_NO_CAPACITY}."
    return response(
        rollout=Rollout(desired=1),
        status={
            "replicas": {"total": 0, "ready": 0},
            "placement": [],
            "unplaced": {
                "count": 1,
                "summary": f"0/1 clusters are available: 1 {REASON_NO_CAPACITY}.",
                "clusters": [
                    {
                        "cluster": name,
                        "reason": REASON_NO_CAPACITY,
                        "detail": "pool pool: 0 free nodes, engine main needs 1",
                    }
                ],
            },
        },
        conditions=[
            condition("ReplicasScheduled", "False", "InsufficientCapacity", message),
            condition("ReplicasReady", "False", "ReplicasNotReady", "0 of 1 replicas are ready."),
        ],
        results=[result("WARNING", "InsufficientCapacity", message)],
        requirements=MD_REQUIREMENTS,
    )


LEDGER_CASES = [
    Case(
        name="a hand-made replica in a namespace the cluster does not name holds none of its nodes",
        req=request(
            deployment(),
            required=resolved(clusters=[private("a", allowedNamespaces=["team-a"])], replicas=[squatter("a")]),
        ),
        want=placed_on("a"),
    ),
    Case(
        name="a replica its own handler found not admitted holds none of a label-admitting cluster's nodes",
        req=request(
            deployment(),
            required=resolved(
                clusters=[private("a", allowedNamespaceSelector=TENANT)],
                replicas=[squatter("a", refused=True)],
                ns=namespace(labels={"tenant": "a"}),
            ),
        ),
        want=placed_on("a"),
    ),
    Case(
        name="a replica whose admission nobody has decided yet still holds its nodes",
        req=request(
            deployment(),
            required=resolved(
                clusters=[private("a", allowedNamespaceSelector=TENANT)],
                replicas=[squatter("a")],
                ns=namespace(labels={"tenant": "a"}),
            ),
        ),
        want=full("a"),
    ),
]


@pytest.mark.parametrize("case", LEDGER_CASES, ids=lambda c: c.name)
def test_the_ledger_charges_only_replicas_their_cluster_admits(grpc_function: RunFunction, case: Case) -> None:
    assert as_dict(grpc_function(case.req)) == case.want


MR = replica("a")
OBJECTS = {o.key: o for o in render_replica(api.parse_replica(MR))}
SOURCES = sorted(k for k, o in OBJECTS.items() if o.readiness_source)
NOT_ADMITTED = (
    "InferenceCluster a does not admit namespace team-a (allowedNamespaces, allowedNamespaceSelector): "
    "nothing is rendered there"
)
FORGED = (
    "spec.providerConfigRef 'private' and spec.workloadNamespace 'modelplane-workloads' must be those of "
    "InferenceCluster a ('a', 'modelplane-workloads')"
)


def _forged() -> dict[str, Any]:
    obj = replica("a")
    obj["spec"]["providerConfigRef"] = {"name": "private"}
    return obj


def _rendered() -> dict[str, tuple[dict[str, Any], bool]]:
    return {k: (dict(o.manifest), False) for k, o in OBJECTS.items()}


def _waiting() -> dict[str, str]:
    n = len(SOURCES)
    return condition(
        "ReplicaReady", "False", "NotReady", f"0 of {n} serving objects are ready; waiting for {', '.join(SOURCES)}."
    )


REPLICA_CASES = [
    Case(
        name="a ModelReplica whose cluster admits its namespace by label is rendered",
        req=request(
            MR,
            required=replica_resolved(
                clusters=[private("a", allowedNamespaceSelector=TENANT)], ns=namespace(labels={"tenant": "a"})
            ),
        ),
        want=response(
            resources=_rendered(),
            conditions=[
                condition("ReplicaRendered", "True", "Rendered", f"Rendered {len(OBJECTS)} objects."),
                _waiting(),
            ],
            requirements=mr_requirements(),
            status=RENDERED,
        ),
    ),
    Case(
        name="a ModelReplica whose cluster does not admit its namespace renders nothing and drops what it had",
        req=request(
            MR,
            observed={k: with_ready(dict(o.manifest)) for k, o in OBJECTS.items()},
            required=replica_resolved(clusters=[private("a", allowedNamespaces=["team-b"])]),
        ),
        want=response(
            conditions=[
                condition("ReplicaRendered", "False", "NamespaceNotAdmitted", NOT_ADMITTED),
                condition("ReplicaReady", "False", "NotReady", "0 of 0 serving objects are ready."),
            ],
            results=[result("WARNING", "NamespaceNotAdmitted", NOT_ADMITTED)],
            requirements=mr_requirements(),
        ),
    ),
    Case(
        name="a ModelReplica pointing at another cluster's ProviderConfig renders nothing there",
        req=request(_forged(), required=replica_resolved()),
        want=response(
            conditions=[
                condition("ReplicaRendered", "False", "InvalidSpec", FORGED),
                condition("ReplicaReady", "False", "NotReady", "0 of 0 serving objects are ready."),
            ],
            results=[result("WARNING", "InvalidSpec", FORGED)],
            requirements=mr_requirements(),
        ),
    ),
]


@pytest.mark.parametrize("case", REPLICA_CASES, ids=lambda c: c.name)
def test_the_model_replica_handler_checks_its_cluster(grpc_function: RunFunction, case: Case) -> None:
    assert as_dict(grpc_function(case.req)) == case.want
