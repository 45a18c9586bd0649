"""Keyword-only builders of XRs, fleet objects and RunFunctionRequests for the function tests.

Objects are plain dicts as a user would write them; requests go through Struct, so numbers reach
the function as floats exactly as in production.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from google.protobuf import json_format, struct_pb2
from modelplane.stated import pool_kind
from modelplane_function.handlers.pools import read_cluster

API = "modelplane.ai/v1alpha1"
IMAGE = "vllm/vllm-openai:v0.11.0"
H100 = 'device.driver == "gpu.nvidia.com" && device.attributes["gpu.nvidia.com"].productName == "H100"'


@dataclass(frozen=True)
class Case:
    """One request to the function and the whole response it must give."""

    name: str
    req: fnv1.RunFunctionRequest
    want: dict[str, Any]


def struct(obj: Mapping[str, Any]) -> struct_pb2.Struct:
    return json_format.ParseDict(dict(obj), struct_pb2.Struct())


def deployment(
    *,
    name: str = "llama",
    namespace: str = "team-a",
    replicas: Any = 1,
    gpus: Any = 1,
    cel: str = H100,
    match_labels: Mapping[str, str] | None = None,
    match_expressions: Sequence[Mapping[str, Any]] = (),
    tolerations: Sequence[Mapping[str, Any]] = (),
    engines: Sequence[Mapping[str, Any]] | None = None,
    status: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    selector: dict[str, Any] = {}
    if match_labels:
        selector["matchLabels"] = dict(match_labels)
    if match_expressions:
        selector["matchExpressions"] = list(match_expressions)
    engine = {
        "name": "main",
        "members": [
            {
                "role": "Standalone",
                "nodeSelector": {"devices": [{"name": "gpu", "count": gpus, "selectors": [{"cel": cel}]}]},
                "template": {"spec": {"containers": [{"name": "engine", "image": IMAGE}]}},
            }
        ],
    }
    spec: dict[str, Any] = {
        "model": {"uri": "hf://Qwen/Qwen3-8B", "name": "qwen3-8b"},
        "engines": list(engines or [engine]),
    }
    if selector:
        spec["clusterSelector"] = selector
    if tolerations:
        spec["tolerations"] = list(tolerations)
    obj: dict[str, Any] = {
        "apiVersion": API,
        "kind": "ModelDeployment",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"replicas": replicas, "template": {"spec": spec}},
    }
    if status is not None:
        obj["status"] = dict(status)
    return obj


def cluster(
    name: str,
    *,
    nodes: Any = 2,
    gpus_per_node: Any = 8,
    product: str = "H100",
    labels: Mapping[str, str] | None = None,
    taints: Sequence[Mapping[str, str]] = (),
    ready: str | None = None,
) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": API,
        "kind": "InferenceCluster",
        "metadata": {"name": name, "labels": dict(labels or {"region": "eu"})},
        "spec": {
            "providerConfigRef": {"name": name},
            "nodePools": [
                {
                    "name": "pool",
                    "nodes": nodes,
                    "devices": [
                        {
                            "name": "gpu",
                            "driver": "gpu.nvidia.com",
                            "deviceClassName": "gpu.nvidia.com",
                            "count": gpus_per_node,
                            "attributes": {"productName": {"string": product}},
                        }
                    ],
                }
            ],
        },
    }
    if taints:
        obj["spec"]["taints"] = list(taints)
    if ready is not None:
        obj["status"] = {"conditions": [{"type": "Ready", "status": ready, "reason": "Test"}]}
    return obj


def namespace(name: str = "team-a", *, labels: Mapping[str, str] | None = None) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": dict(labels or {})}}


def with_ready(obj: Mapping[str, Any], status: str = "True") -> dict[str, Any]:
    """An observed composed resource: `obj` plus a Ready condition."""
    out = dict(obj)
    out["status"] = {"conditions": [{"type": "Ready", "status": status, "reason": "Test"}]}
    return out


def request(
    xr: Mapping[str, Any],
    *,
    observed: Mapping[str, Mapping[str, Any]] | None = None,
    required: Mapping[str, Sequence[Mapping[str, Any]]] | None = None,
    tag: str = "t",
) -> fnv1.RunFunctionRequest:
    """A request; `required` maps requirement names to answers (a missing name is unresolved)."""
    req = fnv1.RunFunctionRequest(meta=fnv1.RequestMeta(tag=tag))
    req.observed.composite.resource.CopyFrom(struct(xr))
    for key, obj in (observed or {}).items():
        req.observed.resources[key].resource.CopyFrom(struct(obj))
    for name, objs in (required or {}).items():
        resources = req.required_resources[name]
        for obj in objs:
            resources.items.add().resource.CopyFrom(struct(obj))
    return req


def resolved(
    *,
    clusters: Sequence[Mapping[str, Any]] = (),
    replicas: Sequence[Mapping[str, Any]] = (),
    ns: Mapping[str, Any] | None = None,
) -> dict[str, list[Mapping[str, Any]]]:
    """Answers to the three ModelDeployment requirements."""
    return {"clusters": list(clusters), "replicas": list(replicas), "namespace": [ns or namespace()]}


def replica_resolved(
    *, clusters: Sequence[Mapping[str, Any]] | None = None, ns: Mapping[str, Any] | None = None
) -> dict[str, list[Mapping[str, Any]]]:
    """Answers to the two ModelReplica requirements: its InferenceCluster (by default "a") and its Namespace."""
    return {"cluster": list(clusters if clusters is not None else [cluster("a")]), "namespace": [ns or namespace()]}


def pool_kind_of(cluster_obj: Mapping[str, Any], pool: int = 0) -> str:
    """The pool kind (modelplane.stated.pool_kind) of one pool of an InferenceCluster, as the function reads it."""
    return pool_kind(read_cluster(struct(cluster_obj)).pools[pool])
