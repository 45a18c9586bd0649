"""Seeded placement-quality scenarios: a fleet of GPU clusters and a demand mix of deployments.

A fleet has 4-12 clusters, each with 1-3 pools of 2-8 nodes: 8x H100 80GB, 8x A100 80GB,
8x A100 40GB or 4x L4, some H100 and A100-80 pools with a Synthetic InfiniBand NIC. Demand is
12-40 ModelDeployments of the shapes platform teams run (one GPU of >= 24Gi, TP2, TP4, 4x L4,
TP8 of >= 80Gi, Hopper-only TP8, a two-node InfiniBand gang, prefill/decode), 1-4 replicas
each, adding up to 80-130% of the fleet's GPUs. Everything is a wire object the function
receives, parsed the way the function parses it. Same seed, same scenario.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from modelplane import api
from modelplane.model import Cluster, Deployment

from tests.benchmarks.shapes import API, GPU_DRIVER, NIC_DRIVER, ready_condition

_ATTRS = f'device.attributes["{GPU_DRIVER}"]'
_MEMORY = f'device.capacity["{GPU_DRIVER}"].memory'
_GPU = f'device.driver == "{GPU_DRIVER}"'
_IB = f'device.driver == "{NIC_DRIVER}" && device.attributes["{NIC_DRIVER}"].rdma'


@dataclass(frozen=True, slots=True, kw_only=True)
class Gpu:
    kind: str
    product: str
    architecture: str
    memory: str
    per_node: int
    weight: int  # how common the kind is
    infiniband: float  # share of its pools with an InfiniBand NIC


GPUS = (
    Gpu(kind="h100", product="NVIDIA H100 80GB HBM3", architecture="Hopper", memory="80Gi", per_node=8, weight=3,
        infiniband=0.5),
    Gpu(kind="a100-80", product="NVIDIA A100-SXM4-80GB", architecture="Ampere", memory="80Gi", per_node=8, weight=3,
        infiniband=0.3),
    Gpu(kind="a100-40", product="NVIDIA A100-SXM4-40GB", architecture="Ampere", memory="40Gi", per_node=8, weight=2,
        infiniband=0.0),
    Gpu(kind="l4", product="NVIDIA L4", architecture="Ada Lovelace", memory="24Gi", per_node=4, weight=2,
        infiniband=0.0),
)  # fmt: skip


@dataclass(frozen=True, slots=True, kw_only=True)
class Shape:
    """A deployment shape: engines as (name, phase, copies, members as (role, workers, GPUs per pod, selectors))."""

    name: str
    engines: tuple[tuple[str, str | None, int, tuple[tuple[str, int, int, tuple[str, ...]], ...]], ...]
    weight: int

    @property
    def gpus(self) -> int:
        """GPUs one replica claims."""
        total = 0
        for _, _, copies, members in self.engines:
            for role, workers, gpus, _ in members:
                total += (workers if role == "Worker" else 1) * gpus * copies
        return total


def _mem(at_least: str) -> tuple[str, ...]:
    return (_GPU, f'{_MEMORY}.compareTo(quantity("{at_least}")) >= 0')


SHAPES = (
    Shape(name="tp1", engines=(("main", None, 1, (("Standalone", 0, 1, _mem("24Gi")),)),), weight=5),
    Shape(name="tp2", engines=(("main", None, 1, (("Standalone", 0, 2, _mem("40Gi")),)),), weight=4),
    Shape(name="tp4", engines=(("main", None, 1, (("Standalone", 0, 4, _mem("40Gi")),)),), weight=3),
    Shape(
        name="l4x4",
        engines=(("main", None, 1, (("Standalone", 0, 4, (_GPU, f'{_ATTRS}.productName == "NVIDIA L4"')),)),),
        weight=2,
    ),
    Shape(name="tp8", engines=(("main", None, 1, (("Standalone", 0, 8, _mem("80Gi")),)),), weight=3),
    Shape(
        name="hopper-tp8",
        engines=(("main", None, 1, (("Standalone", 0, 8, (_GPU, f'{_ATTRS}.architecture == "Hopper"')),)),),
        weight=2,
    ),
    Shape(
        name="ib-gang",
        engines=(("gang", None, 1, (("Leader", 0, 8, _mem("80Gi")), ("Worker", 1, 8, _mem("80Gi")))),),
        weight=2,
    ),
    Shape(
        name="prefill-decode",
        engines=(
            ("prefill", "Prefill", 2, (("Standalone", 0, 2, _mem("40Gi")),)),
            ("decode", "Decode", 1, (("Standalone", 0, 4, _mem("80Gi")),)),
        ),
        weight=2,
    ),
)
_BY_NAME = {s.name: s for s in SHAPES}


@dataclass(frozen=True, slots=True, kw_only=True)
class Demand:
    """One deployment of the mix: its shape, replicas and the parsed deployment."""

    shape: str
    replicas: int
    deployment: Deployment

    @property
    def gpus_per_replica(self) -> int:
        return _BY_NAME[self.shape].gpus


@dataclass(frozen=True, slots=True, kw_only=True)
class Scenario:
    seed: int
    size: str  # "small" (4-7 clusters) or "medium" (8-12)
    packing: str = "Nodes"  # of every pool
    clusters: tuple[Cluster, ...]
    demand: tuple[Demand, ...]  # in generation order; the benchmark shuffles it per run

    @property
    def fleet_gpus(self) -> int:
        return sum(pool_gpus(p) * p.nodes for c in self.clusters for p in c.pools)

    @property
    def demand_gpus(self) -> int:
        return sum(d.gpus_per_replica * d.replicas for d in self.demand)


def pool_gpus(pool: Any) -> int:
    """GPUs per node of a pool (its DRA devices; the NIC is Synthetic)."""
    return sum(d.count for d in pool.devices if d.claim == "DRA")


def _device(gpu: Gpu) -> dict[str, Any]:
    return {
        "name": "gpu",
        "driver": GPU_DRIVER,
        "deviceClassName": GPU_DRIVER,
        "count": gpu.per_node,
        "attributes": {
            "productName": {"string": gpu.product},
            "architecture": {"string": gpu.architecture},
        },
        "capacity": {"memory": {"value": gpu.memory}},
    }


_NIC = {
    "name": "ib",
    "driver": NIC_DRIVER,
    "claim": "Synthetic",
    "count": 8,
    "attributes": {"rdma": {"bool": True}},
}


def cluster_object(name: str, pools: Sequence[tuple[Gpu, int, bool]], *, packing: str = "Nodes") -> dict[str, Any]:
    """An InferenceCluster with pools of (GPU kind, nodes, InfiniBand NIC), each named after its kind."""
    node_pools = [
        {
            "name": gpu.kind,
            "nodes": nodes,
            "packing": packing,
            "devices": [_device(gpu), _NIC] if infiniband else [_device(gpu)],
        }
        for gpu, nodes, infiniband in pools
    ]
    return {
        "apiVersion": API,
        "kind": "InferenceCluster",
        "metadata": {"name": name},
        "spec": {"providerConfigRef": {"name": name}, "nodePools": node_pools},
        "status": {"conditions": [ready_condition("True")]},
    }


def _cluster(rng: random.Random, index: int, packing: str) -> dict[str, Any]:
    kinds = rng.sample(GPUS, k=rng.randint(1, 3), counts=[g.weight for g in GPUS])
    pools = [
        (gpu, rng.randint(2, 8), rng.random() < gpu.infiniband) for gpu in sorted(set(kinds), key=lambda g: g.kind)
    ]
    return cluster_object(f"cluster-{index:02d}", pools, packing=packing)


def _member(role: str, workers: int, gpus: int, selectors: tuple[str, ...], *, infiniband: bool) -> dict[str, Any]:
    devices: list[dict[str, Any]] = [{"name": "gpu", "count": gpus, "selectors": [{"cel": s} for s in selectors]}]
    if infiniband:
        devices.append({"name": "nic", "count": 1, "selectors": [{"cel": _IB}]})
    member: dict[str, Any] = {
        "role": role,
        "nodeSelector": {"devices": devices},
        "template": {"spec": {"containers": [{"name": "engine"}]}},
    }
    if role == "Worker":
        member["worker"] = {"nodes": workers}
    return member


def _deployment(shape: Shape, name: str, namespace: str, replicas: int) -> dict[str, Any]:
    engines: list[dict[str, Any]] = []
    for engine, phase, copies, members in shape.engines:
        gang = any(role == "Leader" for role, *_ in members)
        spec: dict[str, Any] = {
            "name": engine,
            "copies": copies,
            "members": [_member(r, w, g, s, infiniband=gang) for r, w, g, s in members],
        }
        if phase:
            spec["phase"] = phase
        engines.append(spec)
    mode = "PrefillDecode" if any(e.get("phase") for e in engines) else "Unified"
    return {
        "apiVersion": API,
        "kind": "ModelDeployment",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "replicas": replicas,
            "template": {"spec": {"model": {"uri": f"hf://org/{name}"}, "serving": {"mode": mode}, "engines": engines}},
        },
    }


def make_demand(shape: str, name: str, namespace: str, replicas: int) -> Demand:
    wire = _deployment(_BY_NAME[shape], name, namespace, replicas)
    return Demand(shape=shape, replicas=replicas, deployment=api.parse_deployment(wire, namespace_labels={}))


def generate(seed: int, size: str, *, packing: str = "Nodes") -> Scenario:
    """The scenario of `seed`: a small (4-7 clusters) or medium (8-12) fleet and its demand; `packing` on every pool."""
    rng = random.Random(f"{size}-{seed}")
    count = rng.randint(4, 7) if size == "small" else rng.randint(8, 12)
    clusters = tuple(api.parse_cluster(_cluster(rng, i, packing)) for i in range(count))
    fleet = sum(pool_gpus(p) * p.nodes for c in clusters for p in c.pools)
    target = fleet * rng.uniform(0.8, 1.3)
    picked: list[tuple[Shape, int]] = []
    while len(picked) < 40 and (len(picked) < 12 or sum(s.gpus * r for s, r in picked) < target):
        shape = rng.choices(SHAPES, weights=[s.weight for s in SHAPES])[0]
        picked.append((shape, rng.randint(1, 4)))
    # Trim or grow replicas towards the target without leaving 1-4 replicas per deployment.
    for _ in range(4):
        for i in rng.sample(range(len(picked)), len(picked)):
            total = sum(s.gpus * r for s, r in picked)
            shape, replicas = picked[i]
            if total > target and replicas > 1 and total - shape.gpus >= target:
                picked[i] = (shape, replicas - 1)
            elif total < target and replicas < 4:
                picked[i] = (shape, min(4, replicas + max(1, int((target - total) // shape.gpus))))
    demand = tuple(
        make_demand(shape.name, f"d{i:02d}-{shape.name}", f"team-{i % 4}", replicas)
        for i, (shape, replicas) in enumerate(picked)
    )
    return Scenario(seed=seed, size=size, clusters=clusters, demand=demand, packing=packing)
