"""The benchmark grid and the prepared inputs of one case (wire objects, domain values, requests)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane import api
from modelplane.model import Cluster, Deployment, ModelReplica
from modelplane.scheduler import schedule
from modelplane.scheduler.state import statements
from modelplane_function.handlers.deployment import replica_key

from tests.benchmarks import rpc
from tests.benchmarks.fleet import Fleet, generate
from tests.benchmarks.shapes import Shape, deployment, ready_condition

POOLS = 8
SEED = 7


@dataclass(frozen=True, slots=True, kw_only=True)
class Size:
    clusters: int
    existing: int  # replicas of other deployments already in the fleet
    new: int  # replicas the benchmarked deployment asks for

    def label(self) -> str:
        return f"C={self.clusters} E={self.existing} R={self.new}"


# Pruned so `make bench` takes a few minutes on 2 cores: clusters scale at E=0, existing replicas
# at C=1000, new replicas at C=100 (E=1,000) and at the largest fleet.
GRID: tuple[Size, ...] = (
    Size(clusters=10, existing=0, new=1),
    Size(clusters=10, existing=0, new=10),
    Size(clusters=10, existing=0, new=100),
    Size(clusters=100, existing=0, new=100),
    Size(clusters=100, existing=1000, new=1),
    Size(clusters=100, existing=1000, new=10),
    Size(clusters=100, existing=1000, new=100),
    Size(clusters=1000, existing=0, new=100),
    Size(clusters=1000, existing=1000, new=100),
    Size(clusters=1000, existing=10000, new=1),
    Size(clusters=1000, existing=10000, new=10),
    Size(clusters=1000, existing=10000, new=100),
)
QUICK: tuple[Size, ...] = tuple(s for s in GRID if s.clusters <= 100)


@dataclass(frozen=True, slots=True, kw_only=True)
class World:
    """One fleet: wire objects and the domain values the function would parse them into."""

    fleet: Fleet
    clusters: tuple[Cluster, ...]
    replicas: tuple[ModelReplica, ...]
    demands: tuple[dict[str, Any], ...]  # the ModelDemand each of the fleet's deployments composes


@cache
def world(clusters: int, existing: int) -> World:
    fleet = generate(clusters=clusters, pools=POOLS, existing=existing, seed=SEED)
    parsed = tuple(api.parse_cluster(c) for c in fleet.clusters)
    deployments = [api.parse_deployment(d, namespace_labels={}) for d in fleet.deployments]
    return World(
        fleet=fleet,
        clusters=parsed,
        replicas=tuple(api.parse_replica(r) for r in fleet.replicas),
        demands=tuple(api.demand_manifest(s) for s in statements(deployments, parsed)),
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class Case:
    """Inputs for one size and shape: cold (nothing placed yet) and steady (everything placed and observed)."""

    size: Size
    shape: Shape
    world: World
    xr: dict[str, Any]
    deployment: Deployment
    own: tuple[ModelReplica, ...]  # the cold placement, observed back in steady state
    own_wire: dict[str, dict[str, Any]]  # the same as observed composed resources, by resource name

    def cold_args(self) -> tuple[Deployment, Sequence[Cluster], Sequence[ModelReplica]]:
        return self.deployment, self.world.clusters, self.world.replicas

    def steady_args(self) -> tuple[Deployment, Sequence[Cluster], Sequence[ModelReplica]]:
        return self.deployment, self.world.clusters, (*self.world.replicas, *self.own)

    def cold_request(self) -> fnv1.RunFunctionRequest:
        fleet = self.world.fleet
        return rpc.request(
            self.xr,
            observed={},
            clusters=fleet.clusters,
            replicas=fleet.replicas,
            namespace=fleet.namespace,
            demands=self.world.demands,
        )

    def steady_request(self) -> fnv1.RunFunctionRequest:
        fleet = self.world.fleet
        return rpc.request(
            self.xr,
            observed=self.own_wire,
            clusters=fleet.clusters,
            replicas=[*fleet.replicas, *self.own_wire.values()],
            namespace=fleet.namespace,
            demands=self.world.demands,
        )


def _observed(replica: ModelReplica) -> dict[str, Any]:
    obj = api.replica_manifest(replica)
    obj["status"] = {"conditions": [ready_condition("True")]}
    return obj


def case(size: Size, shape: Shape = Shape.STANDALONE) -> Case:
    w = world(size.clusters, size.existing)
    xr = deployment(shape, replicas=size.new)
    dep = api.parse_deployment(xr, namespace_labels={})
    own = schedule(dep, w.clusters, w.replicas).replicas
    return Case(
        size=size,
        shape=shape,
        world=w,
        xr=xr,
        deployment=dep,
        own=own,
        own_wire={replica_key(r): _observed(r) for r in own},
    )
