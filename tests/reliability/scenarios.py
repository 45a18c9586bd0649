"""Valid starting points for the malformed-input and invariant tests, built through the function itself.

A base is a realistic ModelDeployment request (seeded fleet and shapes from tests.benchmarks) whose own
ModelReplicas are what the function composed for it on a first call, now observed and Ready; plus
one of those replicas as a ModelReplica XR with its rendered Objects observed, and one cluster with
its published gpuPools.
"""

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane_function.handlers.convert import to_dict
from modelplane_function.handlers.deployment import DEMAND_KEY

from tests.benchmarks import fleet
from tests.benchmarks.shapes import Shape, deployment
from tests.function.factories import request

from .conftest import RunFunction

READY = {"conditions": [{"type": "Ready", "status": "True", "reason": "Available"}]}


@dataclass
class Scenario:
    """Everything one ModelDeployment request carries, as plain dicts (mutable on purpose: mutants)."""

    xr: dict[str, Any]
    observed: dict[str, dict[str, Any]] = field(default_factory=dict[str, dict[str, Any]])
    clusters: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    replicas: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])  # every MR of the fleet
    namespace: dict[str, Any] = field(default_factory=dict[str, Any])

    def request(self) -> fnv1.RunFunctionRequest:
        required = {"clusters": self.clusters, "replicas": self.replicas, "namespace": [self.namespace]}
        return request(self.xr, observed=self.observed, required=required)


def desired(rsp: fnv1.RunFunctionResponse) -> dict[str, dict[str, Any]]:
    """The composed ModelReplicas by key (the deployment's ModelDemand is about others, not its replicas)."""
    return {key: to_dict(r.resource) for key, r in rsp.desired.resources.items() if key != DEMAND_KEY}


def observed_as_ready(objs: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Desired resources as Crossplane would observe them once they came up."""
    out: dict[str, dict[str, Any]] = {}
    for key, obj in objs.items():
        seen = copy.deepcopy(dict(obj))
        seen["metadata"] = {
            **seen.get("metadata", {}),
            "annotations": {"crossplane.io/composition-resource-name": key},
        }
        seen["status"] = copy.deepcopy(READY)
        out[key] = seen
    return out


def deployment_base(run: RunFunction, *, shape: Shape, seed: int, replicas: int = 3) -> Scenario:
    f = fleet.generate(clusters=5, pools=4, existing=6, seed=seed)
    xr = deployment(shape, replicas=replicas)
    first = Scenario(xr=xr, clusters=list(f.clusters), replicas=list(f.replicas), namespace=copy.deepcopy(f.namespace))
    ours = observed_as_ready(desired(run(first.request())))
    first.observed = ours
    first.replicas = [*first.replicas, *copy.deepcopy(list(ours.values()))]
    return first


def bases(run: RunFunction, seeds: Sequence[int] = (1, 2, 3)) -> list[Scenario]:
    """Bases of every shape that placed at least one replica (so there is something to keep)."""
    out = [deployment_base(run, shape=shape, seed=seed) for shape in Shape for seed in seeds]
    return [s for s in out if s.observed]
