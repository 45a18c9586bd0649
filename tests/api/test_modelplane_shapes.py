"""Modelplane's shapes as the parsers read them: its pools (className, node counts), its published
device counts of 0, and its own ModelReplicas (full parse and the ledger's read agree)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from modelplane import model as m
from modelplane.api import gpu_pools_status, parse_cluster, parse_ledger_replica, parse_replica
from modelplane.errors import SpecError

GPU = {"name": "gpu", "driver": "gpu.nvidia.com", "deviceClassName": "gpu.nvidia.com", "count": 8}
CLASS = {"apiVersion": "modelplane.ai/v1alpha1", "kind": "InferenceClass", "metadata": {"name": "h100-8x"}}
CLASS["spec"] = {"description": "8x H100", "provisioning": {"provider": "EKS"}, "devices": [GPU]}
PUBLISHED_GPU = {**GPU, "claim": "DRA"}


def ic(*pools: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "InferenceCluster", "metadata": {"name": "c"}, "spec": {"nodePools": list(pools)}}


@dataclass(frozen=True)
class PoolCase:
    name: str
    pool: dict[str, Any]
    want: dict[str, Any]


POOL_CASES = [
    PoolCase(
        "nodes as written",
        {"name": "p", "nodes": 3, "devices": [GPU]},
        {"name": "p", "nodes": 3, "devices": [PUBLISHED_GPU]},
    ),
    PoolCase(
        "a Modelplane pool takes its class's devices and nodeCount",
        {"name": "p", "className": "h100-8x", "nodeCount": 2},
        {"name": "p", "nodes": 2, "devices": [PUBLISHED_GPU]},
    ),
    PoolCase(
        "maxNodeCount wins over nodeCount, as Modelplane publishes it",
        {"name": "p", "className": "h100-8x", "nodeCount": 2, "minNodeCount": 1, "maxNodeCount": 10},
        {"name": "p", "nodes": 10, "devices": [PUBLISHED_GPU]},
    ),
    PoolCase(
        "no count at all is Modelplane's default of one node",
        {"name": "p", "className": "h100-8x"},
        {"name": "p", "nodes": 1, "devices": [PUBLISHED_GPU]},
    ),
    PoolCase(
        "a pool scaled to zero publishes zero nodes",
        {"name": "p", "className": "h100-8x", "nodeCount": 0},
        {"name": "p", "nodes": 0, "devices": [PUBLISHED_GPU]},
    ),
]


@pytest.mark.parametrize("case", POOL_CASES, ids=lambda c: c.name)
def test_a_pool_is_published_as_modelplane_publishes_it(case: PoolCase) -> None:
    assert gpu_pools_status(ic(case.pool), {"h100-8x": CLASS}) == [case.want]


def test_a_published_device_count_of_zero_is_no_device_not_an_error() -> None:
    obj = {**ic(), "status": {"gpuPools": [{"name": "p", "nodes": 2, "devices": [{**GPU, "count": 0}]}]}}
    device = m.Device(name="gpu", driver="gpu.nvidia.com", device_class_name="gpu.nvidia.com", count=0)
    assert parse_cluster(obj).pools == (m.NodePool(name="p", nodes=2, devices=(device,)),)


def modelplane_replica(**labels: str) -> dict[str, Any]:
    """A ModelReplica as Modelplane v0.3.1 composes it: selectors as strings, no scheduling, no model."""
    member = {
        "role": "Standalone",
        "nodePoolName": "p",
        "deviceRequests": [
            {
                "name": "gpu",
                "deviceClassName": "gpu.nvidia.com",
                "count": 2,
                "selectors": [{"cel": "device.driver == 'x'"}],
            }
        ],
        "template": {"spec": {"containers": [{"name": "engine", "image": "vllm/vllm-openai:v0.23.0"}]}},
    }
    return {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "ModelReplica",
        "metadata": {"name": "qwen-a1b2c", "namespace": "ml-team", "labels": labels},
        "spec": {
            "clusterName": "c",
            "modelCacheRef": {"name": "qwen"},
            "serving": {"mode": "Unified"},
            "engines": [{"name": "qwen", "copies": 2, "members": [member]}],
        },
    }


REQUEST = m.ResolvedDeviceRequest(
    name="gpu", device_class_name="gpu.nvidia.com", count=2, selectors=("device.driver == 'x'",)
)
ENGINE = m.PlacedEngine(
    name="qwen",
    copies=2,
    members=(
        m.PlacedMember(
            role=m.Role.STANDALONE,
            pool="p",
            device_requests=(REQUEST,),
            template={"spec": {"containers": [{"name": "engine", "image": "vllm/vllm-openai:v0.23.0"}]}},
        ),
    ),
)


@dataclass(frozen=True)
class ReplicaCase:
    name: str
    labels: dict[str, str]
    deployment: str
    index: int


REPLICA_CASES = [
    ReplicaCase(
        "a composed replica without an index label is index 0",
        {"modelplane.ai/deployment": "qwen", "modelplane.ai/cluster": "c"},
        "qwen",
        0,
    ),
    ReplicaCase(
        "an index label is read",
        {"modelplane.ai/deployment": "qwen", "modelplane.ai/cluster": "c", "modelplane.ai/replica-index": "3"},
        "qwen",
        3,
    ),
    ReplicaCase("a hand-made replica without labels belongs to no deployment", {}, "", 0),
]


@pytest.mark.parametrize("case", REPLICA_CASES, ids=lambda c: c.name)
def test_a_modelplane_replica_reads_in_full_and_for_the_ledger(case: ReplicaCase) -> None:
    obj = modelplane_replica(**case.labels)
    want = m.ModelReplica(
        namespace="ml-team",
        name="qwen-a1b2c",
        deployment=case.deployment,
        cluster="c",
        index=case.index,
        engines=(ENGINE,),
        model_cache="qwen",
    )
    ledger_engine = m.PlacedEngine(
        name="qwen", copies=2, members=(m.PlacedMember(role=m.Role.STANDALONE, pool="p", device_requests=(REQUEST,)),)
    )
    assert (parse_replica(obj), parse_ledger_replica(obj)) == (
        want,
        # the ledger reads no cache
        m.ModelReplica(**{**_fields(want), "engines": (ledger_engine,), "model_cache": None}),
    )
    assert parse_ledger_replica(obj).node_cost_by_pool() == {"p": 2}


def _fields(r: m.ModelReplica) -> dict[str, Any]:
    return {f: getattr(r, f) for f in ("namespace", "name", "deployment", "cluster", "index", "labels")}


def test_the_device_memo_does_not_let_a_published_count_of_zero_into_a_spec() -> None:
    memo: dict[str, Any] = {}
    device = {**GPU, "count": 0}
    parse_cluster({**ic(), "status": {"gpuPools": [{"name": "p", "nodes": 1, "devices": [device]}]}}, devices=memo)
    with pytest.raises(SpecError) as e:
        parse_cluster(ic({"name": "p", "nodes": 1, "devices": [device]}), devices=memo)
    assert str(e.value) == "spec.nodePools[0].devices[0].count: Input should be greater than or equal to 1"
