"""Fabric-aware gangs over real gRPC: a gang spans the pools of one fabric, and only those."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from .conftest import as_dict
from .factories import IMAGE, cluster, deployment, request, resolved

RunFunction = Callable[[fnv1.RunFunctionRequest], fnv1.RunFunctionResponse]
GPU = {"name": "gpu", "count": 8, "selectors": [{"cel": 'device.driver == "gpu.nvidia.com"'}]}
GANG = deployment(
    name="gang",
    engines=[
        {
            "name": "main",
            "members": [
                {
                    "role": "Leader",
                    "nodeSelector": {"devices": [GPU]},
                    "template": {"spec": {"containers": [{"name": "engine", "image": IMAGE}]}},
                },
                {
                    "role": "Worker",
                    "worker": {"nodes": 1},
                    "nodeSelector": {"devices": [GPU]},
                    "template": {"spec": {"containers": [{"name": "engine", "image": IMAGE}]}},
                },
            ],
        }
    ],
)


def two_pools(fabrics: list[dict[str, Any]] | None) -> dict[str, Any]:
    """Cluster a with two 1-node pools of 8 GPUs, a and b; a KAI topology and the given fabrics."""
    obj = cluster("a", nodes=1)
    first = obj["spec"]["nodePools"][0]
    obj["spec"]["nodePools"] = [{**first, "name": "a"}, {**copy.deepcopy(first), "name": "b"}]
    obj["spec"]["kai"] = {"topology": "fabric-topology"}
    if fabrics is not None:
        obj["spec"]["fabrics"] = fabrics
    return obj


def engines_of(rsp: dict[str, Any]) -> list[Any]:
    """Per desired ModelReplica, its engines' members' pools and fabric level; then the scheduling message."""
    resources = rsp["desired"].get("resources", {})
    placed = [
        [
            ([x["nodePoolName"] for x in e["members"]], e.get("fabricTopologyLevel"))
            for e in r["resource"]["spec"]["engines"]
        ]
        for _, r in sorted(resources.items())
        if r["resource"]["kind"] == "ModelReplica"
    ]
    (message,) = (c["message"] for c in rsp["conditions"] if c["type"] == "ReplicasScheduled")
    return [placed, message]


@pytest.mark.parametrize(
    ("name", "fabrics", "want"),
    [
        (
            "a gang no single pool holds spans two pools of one fabric, kept to its level",
            [{"name": "ib", "nodePools": ["a", "b"], "topologyLevel": "example.com/ib-domain"}],
            [[[(["a", "b"], "example.com/ib-domain")]], "Scheduled 1 of 1 replicas."],
        ),
        (
            "without a shared fabric the gang is not split across the pools",
            None,
            [
                [],
                "Scheduled 0 of 1 replicas; 0/1 clusters are available for the rest: "
                "1 had no pool with enough free nodes.",
            ],
        ),
    ],
)
def test_a_gang_spans_only_pools_sharing_a_fabric(
    run_function: RunFunction, name: str, fabrics: list[dict[str, Any]] | None, want: list[Any]
) -> None:
    got = as_dict(run_function(request(GANG, required=resolved(clusters=[two_pools(fabrics)]))))
    assert engines_of(got) == want, name
