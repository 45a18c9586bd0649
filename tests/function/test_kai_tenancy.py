"""KAI queues and priority classes per namespace, over real gRPC.

A workload namespace is shared by every team a cluster admits: a deployment that could name any
KAI queue or priority class would spend another team's GPU quota or outrank system pods. The
cluster says what each namespace may use; everything else is refused with what is allowed, and an
existing replica is never removed for it.
"""

from typing import Any

import pytest
from modelplane import api
from modelplane.names import replica_name
from modelplane.render import render_replica
from modelplane.rollout import revision

from .conftest import as_dict
from .factories import Case, cluster, deployment, replica_resolved, request, resolved, with_ready
from .test_deployment import observed_replica, ready, scheduled
from .wants import MD_REQUIREMENTS, REV, Rollout, condition, mr_requirements, placement_entry, replica, response, result

ALLOWED_ON_A = (
    "it may use queue default-queue and priority class inference "
    "(spec.kai: defaultQueue, queuePerNamespace, defaultPriorityClassName, namespaces)"
)


def md(*, queue: str | None = None, priority_class: str | None = None, **kw: Any) -> dict[str, Any]:
    xr = deployment(**kw)
    scheduling = {"queue": queue, "priorityClassName": priority_class}
    xr["spec"]["template"]["spec"]["scheduling"] = {k: v for k, v in scheduling.items() if v is not None}
    return xr


def kai_cluster(name: str, **kai: Any) -> dict[str, Any]:
    obj = cluster(name)
    obj["spec"]["kai"] = kai
    return obj


def rev(**kw: Any) -> str:
    """The template revision of md(**kw)."""
    return revision(api.parse_deployment(md(**kw)))


def mr(
    cluster_name: str, *, queue: str = "default-queue", priority_class: str = "inference", revision: str = REV
) -> dict[str, Any]:
    obj = replica(cluster_name, revision=revision)
    obj["spec"]["scheduling"] = {"queue": queue, "priorityClassName": priority_class}
    return obj


def unplaced(detail: str) -> dict[str, Any]:
    reason = "did not let the namespace use its queue or priority class"
    return {
        "replicas": {"total": 0, "ready": 0},
        "placement": [],
        "unplaced": {
            "count": 1,
            "summary": f"0/1 clusters are available: 1 {reason}.",
            "clusters": [{"cluster": "a", "reason": reason, "detail": detail}],
        },
    }


def refused(detail: str) -> list[dict[str, str]]:
    message = (
        "Scheduled 0 of 1 replicas; 0/1 clusters are available for the rest: 1 did not let the namespace use its "
        f"queue or priority class. {detail}."
    )
    return [condition("ReplicasScheduled", "False", "NoSuitableCluster", message), ready(0, 1)]


def refused_results(detail: str) -> list[dict[str, str]]:
    message = (
        "Scheduled 0 of 1 replicas; 0/1 clusters are available for the rest: 1 did not let the namespace use its "
        f"queue or priority class. {detail}."
    )
    return [result("WARNING", "NoSuitableCluster", message)]


def placed(xr_replica: dict[str, Any]) -> dict[str, Any]:
    revision = xr_replica["metadata"]["labels"]["modelplane.ai/revision"]
    return response(
        rollout=Rollout(desired=1, revision=revision),
        status={"replicas": {"total": 1, "ready": 0}, "placement": [placement_entry("a", revision=revision)]},
        resources={"replica-a-0": (xr_replica, False)},
        conditions=[scheduled(1, 1), ready(0, 1)],
        results=[result("NORMAL", "ReplicasPlaced", f"Placed 1 new replica: {xr_replica['metadata']['name']} on a.")],
        requirements=MD_REQUIREMENTS,
    )


def objects(xr_replica: dict[str, Any]) -> dict[str, tuple[dict[str, Any], bool]]:
    return {o.key: (dict(o.manifest), True) for o in render_replica(api.parse_replica(xr_replica))}


OTHER_QUEUE = "Namespace team-a may not use queue team-b-premium on InferenceCluster a"
OTHER_QUEUE_ON_B = "Namespace team-a may not use queue team-b-premium on InferenceCluster b"
KAI_REASON = "did not let the namespace use its queue or priority class"
SYSTEM = "spec.template.spec.scheduling.priorityClassName: priority classes named system-* are Kubernetes' own and may not be used"
KEPT_OBJECTS = objects(mr("a"))
REFUSED_MR = f"{OTHER_QUEUE}: {ALLOWED_ON_A}: nothing new is rendered, the objects already composed are kept"


CASES = [
    Case(
        name="with nothing set, a replica goes to the queue and priority class KAI installs",
        req=request(md(), required=resolved(clusters=[cluster("a")])),
        want=placed(mr("a")),
    ),
    Case(
        name="another team's queue is refused, saying what the namespace may use",
        req=request(md(queue="team-b-premium"), required=resolved(clusters=[cluster("a")])),
        want=response(
            rollout=Rollout(desired=1, revision=rev(queue="team-b-premium")),
            status=unplaced(f"{OTHER_QUEUE}: {ALLOWED_ON_A}"),
            conditions=refused(f"{OTHER_QUEUE}: {ALLOWED_ON_A}"),
            results=refused_results(f"{OTHER_QUEUE}: {ALLOWED_ON_A}"),
            requirements=MD_REQUIREMENTS,
        ),
    ),
    Case(
        name="a priority class the cluster does not list for the namespace is refused",
        req=request(md(priority_class="build"), required=resolved(clusters=[cluster("a")])),
        want=response(
            rollout=Rollout(desired=1, revision=rev(priority_class="build")),
            status=unplaced(f"Namespace team-a may not use priority class build on InferenceCluster a: {ALLOWED_ON_A}"),
            conditions=refused(
                f"Namespace team-a may not use priority class build on InferenceCluster a: {ALLOWED_ON_A}"
            ),
            results=refused_results(
                f"Namespace team-a may not use priority class build on InferenceCluster a: {ALLOWED_ON_A}"
            ),
            requirements=MD_REQUIREMENTS,
        ),
    ),
    Case(
        name="a queue and priority class the cluster lists for the namespace are used",
        req=request(
            md(queue="team-a-premium", priority_class="build"),
            required=resolved(
                clusters=[
                    kai_cluster(
                        "a",
                        namespaces=[
                            {"namespace": "team-a", "queues": ["team-a-premium"], "priorityClassNames": ["build"]}
                        ],
                    )
                ]
            ),
        ),
        want=placed(
            mr(
                "a",
                queue="team-a-premium",
                priority_class="build",
                revision=rev(queue="team-a-premium", priority_class="build"),
            )
        ),
    ),
    Case(
        name="what the cluster lists for another namespace is not this one's",
        req=request(
            md(queue="team-b-premium"),
            required=resolved(
                clusters=[kai_cluster("a", namespaces=[{"namespace": "team-b", "queues": ["team-b-premium"]}])]
            ),
        ),
        want=response(
            rollout=Rollout(desired=1, revision=rev(queue="team-b-premium")),
            status=unplaced(f"{OTHER_QUEUE}: {ALLOWED_ON_A}"),
            conditions=refused(f"{OTHER_QUEUE}: {ALLOWED_ON_A}"),
            results=refused_results(f"{OTHER_QUEUE}: {ALLOWED_ON_A}"),
            requirements=MD_REQUIREMENTS,
        ),
    ),
    Case(
        name="a cluster the selector rules out is not named for its queues",
        req=request(
            md(queue="team-b-premium", match_labels={"region": "eu"}),
            required=resolved(clusters=[cluster("a"), cluster("b", labels={"region": "us"})]),
        ),
        want=response(
            rollout=Rollout(desired=1, revision=rev(queue="team-b-premium", match_labels={"region": "eu"})),
            status={
                "replicas": {"total": 0, "ready": 0},
                "placement": [],
                "unplaced": {
                    "count": 1,
                    "summary": f"0/2 clusters are available: 1 {KAI_REASON}, 1 did not match clusterSelector.",
                    "clusters": [
                        {"cluster": "a", "reason": KAI_REASON, "detail": f"{OTHER_QUEUE}: {ALLOWED_ON_A}"},
                        {
                            "cluster": "b",
                            "reason": "did not match clusterSelector",
                            "detail": "labels region=us; wants region=eu",
                            "also": [{"reason": KAI_REASON, "detail": f"{OTHER_QUEUE_ON_B}: {ALLOWED_ON_A}"}],
                        },
                    ],
                },
            },
            conditions=[
                condition(
                    "ReplicasScheduled",
                    "False",
                    "NoSuitableCluster",
                    f"Scheduled 0 of 1 replicas; 0/2 clusters are available for the rest: 1 {KAI_REASON}, 1 did not "
                    f"match clusterSelector. {OTHER_QUEUE}: {ALLOWED_ON_A}.",
                ),
                ready(0, 1),
            ],
            results=[
                result(
                    "WARNING",
                    "NoSuitableCluster",
                    f"Scheduled 0 of 1 replicas; 0/2 clusters are available for the rest: 1 {KAI_REASON}, 1 did not "
                    f"match clusterSelector. {OTHER_QUEUE}: {ALLOWED_ON_A}.",
                )
            ],
            requirements=MD_REQUIREMENTS,
        ),
    ),
    Case(
        name="with queuePerNamespace a deployment naming no queue goes to its namespace's queue",
        req=request(md(), required=resolved(clusters=[kai_cluster("a", queuePerNamespace=True)])),
        want=placed(mr("a", queue="team-a")),
    ),
    Case(
        name="the cluster's own defaults replace KAI's",
        req=request(
            md(),
            required=resolved(
                clusters=[kai_cluster("a", defaultQueue="serving", defaultPriorityClassName="serving-high")]
            ),
        ),
        want=placed(mr("a", queue="serving", priority_class="serving-high")),
    ),
    Case(
        name="a system-* priority class is refused as an invalid spec, and nothing is placed",
        req=request(md(priority_class="system-node-critical"), required=resolved(clusters=[cluster("a")])),
        want=response(
            status={"replicas": {"total": 0, "ready": 0}},
            conditions=[condition("ReplicasScheduled", "False", "InvalidSpec", SYSTEM), ready(0, 1)],
            results=[result("WARNING", "InvalidSpec", SYSTEM)],
            requirements=MD_REQUIREMENTS,
        ),
    ),
    Case(
        name="an existing replica is updated in place when its deployment turns to another team's queue",
        req=request(
            md(queue="team-b-premium"),
            observed={"replica-a-0": observed_replica("a")},
            # one node: no room to run the renamed LLMInferenceService beside the old one
            required=resolved(clusters=[cluster("a", nodes=1)], replicas=[observed_replica("a")]),
        ),
        want=response(
            rollout=Rollout(desired=1, revision=rev(queue="team-b-premium"), available=0),
            status={
                "replicas": {"total": 1, "ready": 1},
                "placement": [placement_entry("a", revision=rev(queue="team-b-premium"))],
            },
            resources={"replica-a-0": (mr("a", queue="team-b-premium", revision=rev(queue="team-b-premium")), True)},
            conditions=[scheduled(1, 1), ready(1, 1)],
            results=[
                result(
                    "NORMAL",
                    "ReplicasUpdated",
                    f"Updated 1 replica to revision {rev(queue='team-b-premium')}: {replica_name('llama', 'a', 0)}.",
                )
            ],
            requirements=MD_REQUIREMENTS,
        ),
    ),
    Case(
        name="a ModelReplica naming another team's queue renders nothing new and keeps what it has",
        req=request(
            mr("a", queue="team-b-premium"),
            observed={key: with_ready(obj) for key, (obj, _) in KEPT_OBJECTS.items()},
            required=replica_resolved(),
        ),
        want=response(
            requirements=mr_requirements(),
            resources=KEPT_OBJECTS,
            conditions=[
                condition("ReplicaRendered", "False", "SchedulingNotAllowed", REFUSED_MR),
                condition(
                    "ReplicaReady",
                    "True",
                    "Ready",
                    f"{len(KEPT_OBJECTS)} of {len(KEPT_OBJECTS)} serving objects are ready.",
                ),
            ],
            results=[result("WARNING", "SchedulingNotAllowed", REFUSED_MR)],
        ),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_kai_tenancy(run_function, case: Case) -> None:
    assert as_dict(run_function(case.req)) == case.want
