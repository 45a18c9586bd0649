"""InferenceCluster over real gRPC: pools published from Modelplane InferenceClasses, the fields with no
effect named, and the ClusterUsage that blocks deleting a cluster while ModelReplicas run on it.

Every case compares the whole response.
"""

from pathlib import Path
from typing import Any

import pytest
import yaml
from modelplane import api
from modelplane.api.usage import cluster_usage

from .conftest import as_dict
from .factories import Case, cluster, request
from .wants import condition, replica, response, result

MANIFESTS = Path(__file__).resolve().parents[1] / "api" / "modelplane" / "docs" / "manifests" / "examples" / "qwen3-8b"
IC = yaml.safe_load((MANIFESTS / "inference-cluster.yaml").read_text())  # eks-l4: className eks-l4-1x-g6
CLASS = yaml.safe_load((MANIFESTS / "inference-class.yaml").read_text())
L4 = {
    "name": "gpu-l4",
    "nodes": 1,
    "devices": [
        {
            "name": "gpu",
            "driver": "gpu.nvidia.com",
            "claim": "DRA",
            "deviceClassName": "gpu.nvidia.com",
            "count": 1,
            "attributes": {"architecture": {"string": "Ada Lovelace"}},
            "capacity": {"memory": {"value": "23034Mi"}},
        }
    ],
}
API = "modelplane.ai/v1alpha1"


def requirements(cluster_name: str, *classes: str, by_label: bool = True) -> dict[str, Any]:
    replicas: dict[str, Any] = {"api_version": API, "kind": "ModelReplica"}
    if by_label:
        replicas["match_labels"] = {"labels": {"modelplane.ai/cluster": cluster_name}}
    out = {"replicas": replicas}
    for c in classes:
        out[f"class-{c}"] = {"api_version": API, "kind": "InferenceClass", "match_name": c}
    return {"resources": out}


NOTE = condition(
    "FieldsIgnored",
    "True",
    "NoEffectHere",
    "Accepted for Modelplane compatibility, no effect here: spec.cluster (cluster provisioning; clusters are "
    "reached through spec.providerConfigRef); spec.nodePools[gpu-l4].minNodeCount, spec.nodePools[gpu-l4].zones "
    "(node pool provisioning).",
)
UNREACHABLE = (
    " spec.providerConfigRef is not set: replicas placed here cannot be rendered until it names the"
    " ClusterProviderConfig that reaches this cluster."
)
PUBLISHED_BEFORE = {"gpuPools": [{**L4, "nodes": 3}]}
NEWER_KSERVE = {**cluster("a"), "spec": {**cluster("a")["spec"], "kserve": {"version": "0.21"}}}
DYNAMO = {**cluster("a"), "spec": {**cluster("a")["spec"], "stack": "Dynamo"}}
STANDARD = {**cluster("a"), "spec": {**cluster("a")["spec"], "stack": "Standard"}}
MISSING = "InferenceClass eks-l4-1x-g6 (named by spec.nodePools[].className) does not exist"
REACHED_BY_A = {"providerConfigRef": {"name": "a"}}  # relayed for Modelplane's ModelCache composition
EXISTING_WITH_CACHE = {
    **cluster("a"),
    "spec": {
        **cluster("a")["spec"],
        "cluster": {
            "source": "Existing",
            "existing": {"secretRef": {"name": "kc"}, "cache": {"storageClassName": "nfs"}},
        },
    },
}
MODELPLANE_PUBLISHED = {"providerConfigRef": {"name": "eks-l4-kubeconfig-1a2b3"}, "cache": {"storageClassName": "efs"}}
EXISTING_NOTE = condition(
    "FieldsIgnored",
    "True",
    "NoEffectHere",
    "Accepted for Modelplane compatibility, no effect here: spec.cluster (cluster provisioning; clusters are "
    "reached through spec.providerConfigRef).",
)


def published_cases() -> list[Case]:
    return [
        Case(
            name="the ProviderConfig and an existing cluster's cache StorageClass are relayed for ModelCaches",
            req=request(EXISTING_WITH_CACHE, required={"replicas": []}),
            want=response(
                status={
                    "gpuPools": api.gpu_pools_status(cluster("a")),
                    **REACHED_BY_A,
                    "cache": {"storageClassName": "nfs"},
                },
                conditions=[
                    condition("GPUPoolsPublished", "True", "Published", "Published 1 GPU pools."),
                    EXISTING_NOTE,
                ],
                requirements=requirements("a"),
            ),
        ),
        Case(
            name="what Modelplane published for its ModelCaches stays while the spec names neither",
            req=request(
                {**IC, "status": MODELPLANE_PUBLISHED}, required={"replicas": [], "class-eks-l4-1x-g6": [CLASS]}
            ),
            want=response(
                status={"gpuPools": [L4], **MODELPLANE_PUBLISHED},
                conditions=[condition("GPUPoolsPublished", "True", "Published", "Published 1 GPU pools."), NOTE],
                requirements=requirements("eks-l4", "eks-l4-1x-g6"),
            ),
        ),
        Case(
            name="a Modelplane pool publishes its InferenceClass's devices with maxNodeCount nodes",
            req=request(IC, required={"replicas": [], "class-eks-l4-1x-g6": [CLASS]}),
            want=response(
                status={"gpuPools": [L4]},
                conditions=[
                    condition("GPUPoolsPublished", "True", "Published", f"Published 1 GPU pools.{UNREACHABLE}"),
                    NOTE,
                ],
                requirements=requirements("eks-l4", "eks-l4-1x-g6"),
            ),
        ),
        Case(
            name="until the InferenceClasses are known, what was published stays",
            req=request({**IC, "status": PUBLISHED_BEFORE}, required={"replicas": []}),
            want=response(
                status=PUBLISHED_BEFORE, conditions=[NOTE], requirements=requirements("eks-l4", "eks-l4-1x-g6")
            ),
        ),
        Case(
            name="until the InferenceClasses are known, what was relayed for ModelCaches stays too",
            req=request({**IC, "status": {**PUBLISHED_BEFORE, **MODELPLANE_PUBLISHED}}, required={"replicas": []}),
            want=response(
                status={**PUBLISHED_BEFORE, **MODELPLANE_PUBLISHED},
                conditions=[NOTE],
                requirements=requirements("eks-l4", "eks-l4-1x-g6"),
            ),
        ),
        Case(
            name="a missing InferenceClass keeps what was published and says which",
            req=request({**IC, "status": PUBLISHED_BEFORE}, required={"replicas": [], "class-eks-l4-1x-g6": []}),
            want=response(
                status=PUBLISHED_BEFORE,
                conditions=[condition("GPUPoolsPublished", "False", "InferenceClassNotFound", MISSING), NOTE],
                results=[result("WARNING", "InferenceClassNotFound", MISSING)],
                requirements=requirements("eks-l4", "eks-l4-1x-g6"),
            ),
        ),
        Case(
            name="the note is withdrawn once the Modelplane fields are gone",
            req=request(
                {
                    **cluster("a"),
                    "status": {"conditions": [{"type": "FieldsIgnored", "status": "True", "reason": "NoEffectHere"}]},
                },
                required={"replicas": []},
            ),
            want=response(
                status={"gpuPools": api.gpu_pools_status(cluster("a")), **REACHED_BY_A},
                conditions=[
                    condition("GPUPoolsPublished", "True", "Published", "Published 1 GPU pools."),
                    condition("FieldsIgnored", "False", "AllFieldsUsed", "Every field set takes effect."),
                ],
                requirements=requirements("a"),
            ),
        ),
        Case(
            name="a cluster on a later KServe than the function knows says its replicas render as the newest known",
            req=request(NEWER_KSERVE, required={"replicas": []}),
            want=response(
                status={"gpuPools": api.gpu_pools_status(NEWER_KSERVE), **REACHED_BY_A},
                conditions=[
                    condition(
                        "GPUPoolsPublished",
                        "True",
                        "Published",
                        "Published 1 GPU pools. KServe 0.21 is newer than the versions replicas are rendered for "
                        "(0.16 to 0.20): they are rendered as for KServe 0.20, assuming its presets launch vLLM "
                        "as 0.20's do.",
                    )
                ],
                requirements=requirements("a"),
            ),
        ),
        Case(
            name="a cluster on the Dynamo stack says multi-node engines are not placed there",
            req=request(DYNAMO, required={"replicas": []}),
            want=response(
                status={"gpuPools": api.gpu_pools_status(DYNAMO), **REACHED_BY_A},
                conditions=[
                    condition(
                        "GPUPoolsPublished",
                        "True",
                        "Published",
                        "Published 1 GPU pools. Stack Dynamo: deployments with a multi-node engine are not placed "
                        "here, as its Grove PodCliqueSets are not rendered; single-node engines are.",
                    )
                ],
                requirements=requirements("a"),
            ),
        ),
        Case(
            name="a cluster stating the Standard stack publishes its pools as one that does not",
            req=request(STANDARD, required={"replicas": []}),
            want=response(
                status={"gpuPools": api.gpu_pools_status(cluster("a")), **REACHED_BY_A},
                conditions=[condition("GPUPoolsPublished", "True", "Published", "Published 1 GPU pools.")],
                requirements=requirements("a"),
            ),
        ),
    ]


def ours(cluster_name: str, deployment: str, namespace: str = "team-a") -> dict[str, Any]:
    return replica(cluster_name, deployment=deployment, namespace=namespace)


def modelplane_replica(cluster_name: str, name: str) -> dict[str, Any]:
    """A replica as Modelplane composes it: no index label, no scheduling, selectors as strings."""
    obj = replica(cluster_name, deployment="legacy", namespace="team-b")
    del obj["metadata"]["labels"]["modelplane.ai/replica-index"]
    obj["metadata"]["name"] = name
    return obj


LONG = "c" * 64  # a valid cluster name (DNS subdomain) that no label value can hold
GUARD_PUBLISHED = {"gpuPools": api.gpu_pools_status(cluster("a")), **REACHED_BY_A}
PUBLISHED_A = condition("GPUPoolsPublished", "True", "Published", "Published 1 GPU pools.")


def guard_cases() -> list[Case]:
    hosted = [ours("a", "llama"), ours("a", "mistral", "team-c"), modelplane_replica("a", "legacy-7f3a1")]
    names = sorted(f"{r['metadata']['namespace']}/{r['metadata']['name']}" for r in hosted)
    return [
        Case(
            name="a cluster hosting replicas composes a ClusterUsage that names them",
            req=request(cluster("a"), required={"replicas": hosted}),
            want=response(
                status=GUARD_PUBLISHED,
                resources={"replica-guard": (cluster_usage("a", names), True)},
                conditions=[PUBLISHED_A],
                requirements=requirements("a"),
            ),
        ),
        Case(
            name="a cluster hosting no replica composes no guard, so a refused delete is replayed",
            req=request(cluster("a"), observed={"replica-guard": cluster_usage("a", names)}, required={"replicas": []}),
            want=response(status=GUARD_PUBLISHED, conditions=[PUBLISHED_A], requirements=requirements("a")),
        ),
        Case(
            name="until the replicas are known, the guard stays",
            req=request(cluster("a"), observed={"replica-guard": cluster_usage("a", names)}),
            want=response(
                status=GUARD_PUBLISHED,
                resources={"replica-guard": ({**cluster_usage("a", names), "metadata": {}}, False)},
                conditions=[PUBLISHED_A],
                requirements=requirements("a"),
            ),
        ),
        Case(
            name="a cluster name too long for a label asks for every replica and keeps those pinned to it",
            req=request(cluster(LONG), required={"replicas": [ours(LONG, "llama"), ours("a", "mistral")]}),
            want=response(
                status={"gpuPools": api.gpu_pools_status(cluster(LONG)), "providerConfigRef": {"name": LONG}},
                resources={
                    "replica-guard": (cluster_usage(LONG, [f"team-a/{ours(LONG, 'llama')['metadata']['name']}"]), True)
                },
                conditions=[PUBLISHED_A],
                requirements=requirements(LONG, by_label=False),
            ),
        ),
    ]


@pytest.mark.parametrize("case", published_cases() + guard_cases(), ids=lambda c: c.name)
def test_inference_cluster(run_function, case: Case) -> None:
    assert as_dict(run_function(case.req)) == case.want
