"""Status tells the truth about the workload, over real gRPC.

A composed object that reports failure (an LLMInferenceService `Ready=False ConfigNotFound`, an
Object whose manifest the API server refused) shows on its ModelReplica, with the object and the
reason; a ModelReplica that cannot render or whose objects fail shows on its deployment.
"""

from typing import Any

import pytest

from .conftest import as_dict
from .factories import Case, cluster, deployment, replica_resolved, request, resolved, with_ready
from .test_deployment import observed_replica, scheduled
from .test_replica_cluster import rendered, sources
from .wants import MD_REQUIREMENTS, RENDERED, Rollout, condition, mr_requirements, placement_entry, replica, response

MR = replica("a")
OBJECTS = rendered(MR)
(LLMIS,) = sources(MR)
LLMIS_NAME = OBJECTS[LLMIS][0]["spec"]["forProvider"]["manifest"]["metadata"]["name"]
OTHERS = sorted(k for k in OBJECTS if k != LLMIS)
NO_CONFIG = (
    "LLMInferenceServiceConfig kserve-config-llm-worker-pipeline-parallel not found in namespaces "
    "[modelplane-workloads kserve]"
)


def llmis_reporting(*conditions: dict[str, str]) -> dict[str, Any]:
    """The LLMIS Object as provider-kubernetes reports it: Unavailable, the LLMIS's own status inside."""
    obj, _ = OBJECTS[LLMIS]
    status = {
        "conditions": [
            {"type": "Synced", "status": "True", "reason": "ReconcileSuccess"},
            {"type": "Ready", "status": "False", "reason": "Unavailable"},
        ],
        "atProvider": {
            "manifest": {
                "apiVersion": "serving.kserve.io/v1alpha1",
                "kind": "LLMInferenceService",
                "metadata": {"name": LLMIS_NAME, "namespace": "modelplane-workloads"},
                "status": {"conditions": list(conditions)},
            }
        },
    }
    return {**obj, "status": status}


def not_applied(key: str, message: str) -> dict[str, Any]:
    obj, _ = OBJECTS[key]
    conditions = [{"type": "Synced", "status": "False", "reason": "ReconcileError", "message": message}]
    return {**obj, "status": {"conditions": conditions}}


def observed(**changed: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every object Ready, except those given."""
    return {key: changed.get(key, with_ready(obj)) for key, (obj, _) in OBJECTS.items()}


def mr_response(ready: dict[str, str], *, not_ready: tuple[str, ...]) -> dict[str, Any]:
    return response(
        requirements=mr_requirements(),
        status=RENDERED,
        resources={key: (obj, key not in not_ready) for key, (obj, _) in OBJECTS.items()},
        conditions=[condition("ReplicaRendered", "True", "Rendered", f"Rendered {len(OBJECTS)} objects."), ready],
    )


REFUSED = 'LLMInferenceService.serving.kserve.io "x" is invalid: metadata.labels: Invalid value: "q...q"'
READY_FAILING = (
    f"0 of 1 serving objects are ready; {LLMIS} (LLMInferenceService {LLMIS_NAME}) reports Ready=False "
    f"ConfigNotFound: {NO_CONFIG}."
)


def failing_mr(name_cluster: str, condition_type: str, reason: str, message: str) -> dict[str, Any]:
    obj = observed_replica(name_cluster, ready="False")
    obj["status"] = {
        "conditions": [
            {"type": condition_type, "status": "False", "reason": reason, "message": message},
            {"type": "Ready", "status": "False", "reason": "Creating"},
        ]
    }
    return obj


NO_MODEL = "no model: set spec.template.spec.model or --model in the engine args"


def md_case(name: str, failing: dict[str, dict[str, Any]], message: str) -> Case:
    """A deployment whose composed replicas (cluster -> observed ModelReplica) all stay where they are."""
    clusters = sorted(failing)
    return Case(
        name=name,
        req=request(
            deployment(replicas=len(clusters)),
            observed={f"replica-{c}-0": obj for c, obj in failing.items()},
            required=resolved(clusters=[cluster(c) for c in clusters], replicas=list(failing.values())),
        ),
        want=response(
            rollout=Rollout(desired=len(clusters)),
            status={
                "replicas": {"total": len(clusters), "ready": 0},
                "placement": [placement_entry(c) for c in clusters],
            },
            resources={f"replica-{c}-0": (replica(c), False) for c in clusters},
            conditions=[
                scheduled(len(clusters), len(clusters)),
                condition("ReplicasReady", "False", "ReplicasNotReady", message),
            ],
            requirements=MD_REQUIREMENTS,
        ),
    )


def rn(c: str) -> str:
    return replica("a" if c == "a" else c)["metadata"]["name"]


CASES = [
    Case(
        name="an LLMInferenceService reporting Ready=False shows on its replica with the object and reason",
        req=request(
            MR,
            observed=observed(
                **{
                    LLMIS: llmis_reporting(
                        {"type": "Ready", "status": "False", "reason": "ConfigNotFound", "message": NO_CONFIG}
                    )
                }
            ),
            required=replica_resolved(),
        ),
        want=mr_response(condition("ReplicaReady", "False", "ObjectFailing", READY_FAILING), not_ready=(LLMIS,)),
    ),
    Case(
        name="an LLMInferenceService still starting (Ready=Unknown) is waited for, not called failing",
        req=request(
            MR,
            observed=observed(
                **{LLMIS: llmis_reporting({"type": "Ready", "status": "Unknown", "reason": "Deploying"})}
            ),
            required=replica_resolved(),
        ),
        want=mr_response(
            condition("ReplicaReady", "False", "NotReady", f"0 of 1 serving objects are ready; waiting for {LLMIS}."),
            not_ready=(LLMIS,),
        ),
    ),
    *(
        Case(
            name=f"an LLMInferenceService Object whose status is {label} is waited for, not a crash",
            req=request(
                MR, observed=observed(**{LLMIS: {**OBJECTS[LLMIS][0], "status": junk}}), required=replica_resolved()
            ),
            want=mr_response(
                condition(
                    "ReplicaReady", "False", "NotReady", f"0 of 1 serving objects are ready; waiting for {LLMIS}."
                ),
                not_ready=(LLMIS,),
            ),
        )
        for label, junk in (
            ("a boolean", True),
            ("a list", ["Ready"]),
            ("atProvider as a string", {"atProvider": "manifest"}),
            ("a manifest with a string status", {"atProvider": {"manifest": {"status": "Ready"}}}),
        )
    ),
    Case(
        name="a status that is not an object is read as saying nothing",
        req=request(
            MR, observed=observed(**{LLMIS: {**OBJECTS[LLMIS][0], "status": "junk"}}), required=replica_resolved()
        ),
        want=mr_response(
            condition("ReplicaReady", "False", "NotReady", f"0 of 1 serving objects are ready; waiting for {LLMIS}."),
            not_ready=(LLMIS,),
        ),
    ),
    Case(
        name="an atProvider that is not an object is read as saying nothing",
        req=request(
            MR,
            observed=observed(**{LLMIS: {**OBJECTS[LLMIS][0], "status": {"atProvider": "junk"}}}),
            required=replica_resolved(),
        ),
        want=mr_response(
            condition("ReplicaReady", "False", "NotReady", f"0 of 1 serving objects are ready; waiting for {LLMIS}."),
            not_ready=(LLMIS,),
        ),
    ),
    Case(
        name="an object the API server refused shows on the replica, whichever object it is",
        req=request(MR, observed=observed(**{OTHERS[0]: not_applied(OTHERS[0], REFUSED)}), required=replica_resolved()),
        want=mr_response(
            condition(
                "ReplicaReady",
                "False",
                "ObjectFailing",
                f"1 of 1 serving objects are ready; {OTHERS[0]} is not applied (Synced=False ReconcileError: {REFUSED}).",
            ),
            not_ready=(OTHERS[0],),
        ),
    ),
    md_case(
        "a replica that cannot render shows on its deployment",
        {"a": failing_mr("a", "ReplicaRendered", "CannotRender", NO_MODEL)},
        f"0 of 1 replicas are ready; {rn('a')}: ReplicaRendered=False CannotRender: {NO_MODEL}.",
    ),
    md_case(
        "a replica whose objects fail shows on its deployment with the object and reason",
        {"a": failing_mr("a", "ReplicaReady", "ObjectFailing", READY_FAILING)},
        f"0 of 1 replicas are ready; {rn('a')}: ReplicaReady=False ObjectFailing: {READY_FAILING}",
    ),
    md_case(
        "a replica only waiting for its objects adds nothing to the deployment's message",
        {"a": failing_mr("a", "ReplicaReady", "NotReady", f"0 of 1 serving objects are ready; waiting for {LLMIS}.")},
        "0 of 1 replicas are ready.",
    ),
    md_case(
        "past three failing replicas the rest are counted",
        {c: failing_mr(c, "ReplicaRendered", "CannotRender", NO_MODEL) for c in ("a", "b", "c", "d", "e")},
        "0 of 5 replicas are ready; "
        + "; ".join(f"{rn(c)}: ReplicaRendered=False CannotRender: {NO_MODEL}" for c in ("a", "b", "c"))
        + "; and 2 more.",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_status_truth(run_function, case: Case) -> None:
    assert as_dict(run_function(case.req)) == case.want
