"""Seeded synthetic fleets as wire dicts: InferenceClusters and the ModelReplicas already on them.

Everything is what the function would receive (shapes from apis/*/definition.yaml), so the same
fleet feeds schedule() after parsing and a RunFunctionRequest after Struct conversion. Clusters
carry P pools of mixed GPU kinds with the attributes the NVIDIA DRA driver publishes; some pools
add a Synthetic InfiniBand NIC, some clusters carry taints or are not Ready. Existing replicas
belong to many deployments of every shape and are charged against pools that still have room,
so the fleet is never overcommitted. Same arguments, same fleet.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from tests.benchmarks.shapes import API, GPU_DRIVER, NIC_DRIVER, PLACED, Shape, deployment, ready_condition, replica

REGIONS = ("us-east", "us-west", "eu-west", "eu-central", "ap-south")
TIERS = ("prod", "prod", "staging", "batch")
DRIVER_VERSIONS = ("550.90.7", "560.35.3", "570.124.6")


@dataclass(frozen=True, slots=True, kw_only=True)
class Gpu:
    kind: str
    product: str
    architecture: str
    compute: str  # cudaComputeCapability as a semantic version
    memory: str
    per_node: int
    weight: int  # how common the kind is in the fleet


GPUS = (
    Gpu(
        kind="h100",
        product="NVIDIA H100 80GB HBM3",
        architecture="Hopper",
        compute="9.0.0",
        memory="80Gi",
        per_node=8,
        weight=30,
    ),
    Gpu(
        kind="h200",
        product="NVIDIA H200",
        architecture="Hopper",
        compute="9.0.0",
        memory="141Gi",
        per_node=8,
        weight=20,
    ),
    Gpu(
        kind="b200",
        product="NVIDIA B200",
        architecture="Blackwell",
        compute="10.0.0",
        memory="180Gi",
        per_node=8,
        weight=15,
    ),
    Gpu(
        kind="a100",
        product="NVIDIA A100-SXM4-80GB",
        architecture="Ampere",
        compute="8.0.0",
        memory="80Gi",
        per_node=8,
        weight=20,
    ),
    Gpu(
        kind="l40s",
        product="NVIDIA L40S",
        architecture="Ada Lovelace",
        compute="8.9.0",
        memory="48Gi",
        per_node=4,
        weight=15,
    ),
)
_IB_KINDS = frozenset({"h100", "h200", "b200"})


@dataclass(frozen=True, slots=True, kw_only=True)
class Fleet:
    clusters: tuple[dict[str, Any], ...]
    replicas: tuple[dict[str, Any], ...]  # existing ModelReplicas of other deployments
    namespace: dict[str, Any]  # the Namespace of the benchmarked deployment
    deployments: tuple[dict[str, Any], ...] = ()  # the ModelDeployments of those replicas, each fully placed


# --- clusters -----------------------------------------------------------------------------------


def _gpu_device(gpu: Gpu, driver_version: str) -> dict[str, Any]:
    return {
        "name": "gpu",
        "driver": GPU_DRIVER,
        "deviceClassName": GPU_DRIVER,
        "count": gpu.per_node,
        "attributes": {
            "type": {"string": "gpu"},
            "productName": {"string": gpu.product},
            "architecture": {"string": gpu.architecture},
            "brand": {"string": "Nvidia"},
            "cudaComputeCapability": {"version": gpu.compute},
            "driverVersion": {"version": driver_version},
        },
        "capacity": {"memory": {"value": gpu.memory}},
    }


def _nic_device() -> dict[str, Any]:
    return {
        "name": "ib",
        "driver": NIC_DRIVER,
        "claim": "Synthetic",
        "count": 8,
        "attributes": {"rdma": {"bool": True}, "linkType": {"string": "infiniband"}},
    }


def _cluster(rng: random.Random, index: int, pools: int) -> tuple[dict[str, Any], list[tuple[Gpu, str, int]]]:
    region = REGIONS[index % len(REGIONS)]
    name = f"{region}-{index:04d}"
    driver_version = rng.choice(DRIVER_VERSIONS)
    kinds = rng.choices(GPUS, weights=[g.weight for g in GPUS], k=pools)
    node_pools: list[dict[str, Any]] = []
    layout: list[tuple[Gpu, str, int]] = []
    for j, gpu in enumerate(kinds):
        nodes = rng.randint(8, 64)
        devices = [_gpu_device(gpu, driver_version)]
        if gpu.kind in _IB_KINDS and rng.random() < 0.6:
            devices.append(_nic_device())
        pool = f"{gpu.kind}-{j}"
        node_pools.append({"name": pool, "nodes": nodes, "devices": devices})
        layout.append((gpu, pool, nodes))
    spec: dict[str, Any] = {
        "providerConfigRef": {"name": name},
        "workloadNamespace": "modelplane-workloads",
        "kai": {"defaultQueue": "inference"},
        "nodePools": node_pools,
    }
    if rng.random() < 0.1:
        spec["taints"] = [{"key": "nvidia.com/gpu-maintenance", "value": "true", "effect": "NoSchedule"}]
    ready = "False" if rng.random() < 0.02 else "True"
    obj = {
        "apiVersion": API,
        "kind": "InferenceCluster",
        "metadata": {"name": name, "labels": {"region": region, "tier": rng.choice(TIERS)}},
        "spec": spec,
        "status": {
            "gpuPools": node_pools,
            "conditions": [ready_condition(ready)],
        },
    }
    return obj, layout


def _engine_cost(members: tuple[tuple[str, int], ...], copies: int) -> int:
    return sum((w if role == "Worker" else 1) * copies for role, w in members if role != "Leader")


def _pick_pools(
    rng: random.Random, layout: list[tuple[Gpu, str, int]], free: dict[str, int], shape: Shape, copies: int
) -> list[str] | None:
    """One pool per engine with room for it (charging as it goes), or None (nothing charged)."""
    chosen: list[str] = []
    taken: dict[str, int] = {}
    for _, _, kinds, _, members in PLACED[shape]:
        cost = _engine_cost(members, copies)
        fits = [pool for gpu, pool, _ in layout if gpu.kind in kinds and free[pool] - taken.get(pool, 0) >= cost]
        if not fits:
            return None
        pool = rng.choice(fits)
        taken[pool] = taken.get(pool, 0) + cost
        chosen.append(pool)
    for pool, n in taken.items():
        free[pool] -= n
    return chosen


def generate(*, clusters: int, pools: int = 8, existing: int = 0, seed: int = 0) -> Fleet:
    """A fleet of `clusters` x `pools` with `existing` replicas of other deployments; raises if they do not fit."""
    rng = random.Random(seed)
    objs: list[dict[str, Any]] = []
    layouts: list[list[tuple[Gpu, str, int]]] = []
    for i in range(clusters):
        obj, layout = _cluster(rng, i, pools)
        objs.append(obj)
        layouts.append(layout)
    free = [{pool: nodes for _, pool, nodes in layout} for layout in layouts]
    replicas: list[dict[str, Any]] = []
    next_index: dict[tuple[str, str], int] = {}
    dep_no = 0
    deployments: list[dict[str, Any]] = []
    while len(replicas) < existing:
        shape = rng.choice(list(Shape))
        dep, namespace = f"model-{dep_no:05d}", f"team-{dep_no % 40:02d}"
        dep_no += 1
        copies = rng.randint(1, 2)
        count = min(rng.randint(1, 20), existing - len(replicas))
        deployments.append(deployment(shape, replicas=count, name=dep, namespace=namespace))
        for _ in range(count):
            for _attempt in range(50):
                c = rng.randrange(clusters)
                chosen = _pick_pools(rng, layouts[c], free[c], shape, copies)
                if chosen is not None:
                    break
            else:
                msg = f"{existing} existing replicas do not fit {clusters} clusters x {pools} pools"
                raise ValueError(msg)
            cluster = objs[c]["metadata"]["name"]
            index = next_index.get((dep, cluster), 0)
            next_index[(dep, cluster)] = index + 1
            replicas.append(
                replica(
                    dep=dep, namespace=namespace, shape=shape, cluster=cluster, index=index, copies=copies, pools=chosen
                )
            )
    namespace_obj = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "bench", "labels": {}}}
    return Fleet(
        clusters=tuple(objs), replicas=tuple(replicas), namespace=namespace_obj, deployments=tuple(deployments)
    )
