"""ModelReplica and InferenceCluster over real gRPC, plus the dispatcher's FATAL paths."""

from typing import Any

import pytest
from modelplane import api
from modelplane.errors import SpecError
from modelplane.render import render_replica
from modelplane_function.handlers import deployment as deployment_handler

from .conftest import as_dict
from .factories import Case, cluster, deployment, replica_resolved, request, resolved, with_ready
from .wants import RENDERED, condition, mr_requirements, replica, response


def rendered(mr: dict[str, Any]) -> dict[str, tuple[dict[str, Any], bool]]:
    """The renderer's objects for `mr` keyed as the function composes them (none ready)."""
    return {o.key: (dict(o.manifest), False) for o in render_replica(api.parse_replica(mr))}


def sources(mr: dict[str, Any]) -> list[str]:
    return sorted(o.key for o in render_replica(api.parse_replica(mr)) if o.readiness_source)


MR = replica("a")
NO_MODEL = {**MR, "spec": {k: v for k, v in MR["spec"].items() if k != "model"}}
OBJECTS = rendered(MR)
LLMIS = sources(MR)


def no_model_message() -> str:
    with pytest.raises(SpecError) as e:
        render_replica(api.parse_replica(NO_MODEL))
    return str(e.value)


CASES = [
    Case(
        name="a fresh replica renders every object and waits for its LLMInferenceService",
        req=request(MR, required=replica_resolved()),
        want=response(
            requirements=mr_requirements(),
            status=RENDERED,
            resources=OBJECTS,
            conditions=[
                condition("ReplicaRendered", "True", "Rendered", f"Rendered {len(OBJECTS)} objects."),
                condition(
                    "ReplicaReady",
                    "False",
                    "NotReady",
                    f"0 of {len(LLMIS)} serving objects are ready; waiting for {', '.join(LLMIS)}.",
                ),
            ],
        ),
    ),
    Case(
        name="objects observed Ready are marked ready and make the replica ready",
        req=request(
            MR, observed={key: with_ready(obj) for key, (obj, _) in OBJECTS.items()}, required=replica_resolved()
        ),
        want=response(
            requirements=mr_requirements(),
            status=RENDERED,
            resources={key: (obj, True) for key, (obj, _) in OBJECTS.items()},
            conditions=[
                condition("ReplicaRendered", "True", "Rendered", f"Rendered {len(OBJECTS)} objects."),
                condition("ReplicaReady", "True", "Ready", f"{len(LLMIS)} of {len(LLMIS)} serving objects are ready."),
            ],
        ),
    ),
    Case(
        name="a replica that cannot be rendered keeps the objects it already has",
        req=request(
            NO_MODEL, observed={key: with_ready(obj) for key, (obj, _) in OBJECTS.items()}, required=replica_resolved()
        ),
        want=response(
            requirements=mr_requirements(),
            resources={key: (obj, True) for key, (obj, _) in OBJECTS.items()},
            conditions=[
                condition("ReplicaRendered", "False", "CannotRender", no_model_message()),
                condition(
                    "ReplicaReady", "True", "Ready", f"{len(OBJECTS)} of {len(OBJECTS)} serving objects are ready."
                ),
            ],
            results=[
                {
                    "severity": "SEVERITY_WARNING",
                    "reason": "CannotRender",
                    "message": no_model_message(),
                    "target": "TARGET_COMPOSITE",
                }
            ],
        ),
    ),
    Case(
        name="an InferenceCluster publishes its node pools as status.gpuPools, and its ProviderConfig",
        req=request(cluster("a", nodes=3.0)),
        want=response(
            status={"gpuPools": api.gpu_pools_status(cluster("a", nodes=3)), "providerConfigRef": {"name": "a"}},
            conditions=[condition("GPUPoolsPublished", "True", "Published", "Published 1 GPU pools.")],
            requirements={
                "resources": {
                    "replicas": {
                        "api_version": "modelplane.ai/v1alpha1",
                        "kind": "ModelReplica",
                        "match_labels": {"labels": {"modelplane.ai/cluster": "a"}},
                    }
                }
            },
        ),
    ),
    Case(
        name="a composite kind the function does not compose is a single FATAL result",
        req=request({"apiVersion": "example.org/v1", "kind": "Bucket", "metadata": {"name": "b"}}),
        want={
            "meta": {"tag": "t", "ttl": "60s"},
            "desired": {},
            "context": {},
            "results": [
                {"severity": "SEVERITY_FATAL", "message": "function-modelplane does not compose example.org/v1 Bucket"}
            ],
        },
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_replica_and_cluster(run_function, case: Case) -> None:
    assert as_dict(run_function(case.req)) == case.want


def test_an_unexpected_exception_is_one_fatal_result_and_nothing_else(run_function, monkeypatch) -> None:
    def boom(*_: Any, **__: Any) -> None:
        msg = "scheduler exploded"
        raise RuntimeError(msg)

    monkeypatch.setattr(deployment_handler, "reconcile", boom)
    req = request(deployment(), required=resolved(clusters=[cluster("a")]))
    want = {
        "meta": {"tag": "t", "ttl": "60s"},
        "desired": {},
        "context": {},
        "results": [
            {
                "severity": "SEVERITY_FATAL",
                "message": "internal error composing ModelDeployment: RuntimeError: scheduler exploded",
            }
        ],
    }
    assert as_dict(run_function(req)) == want
