"""Running out of memory reading a fleet object fails the call: it never reads as a bad object left out.

A deployment, cluster or replica that cannot be read is contained (its own reconcile or the
diagnosis reports it) and scheduling goes on without it. Memory running out is the machine, not
the object: contained, it would give another schedule for the same fleet, silently, only when the
machine is short. It must fail the call instead (FATAL: Crossplane changes nothing and retries).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from google.protobuf import struct_pb2
from modelplane import api
from modelplane.scheduler.state import statements
from modelplane_function.handlers import requirements
from modelplane_function.handlers.memo import Memo, identity
from modelplane_function.handlers.pools import read_cluster

from .caches import clear_all
from .factories import cluster, deployment, request, resolved, struct
from .wants import replica

ANY_GPU = 'device.driver == "gpu.nvidia.com"'
BIG = deployment(name="big", gpus=8)
SMALL = deployment(name="small", namespace="team-b", cel=ANY_GPU)
FLEET = [cluster("a", nodes=1), cluster("b", nodes=1, product="A100")]
OTHER = replica("b", deployment="other", namespace="team-c", cel=ANY_GPU)


def demand_of(xr: Mapping[str, Any]) -> dict[str, Any]:
    """The ModelDemand `xr`'s own reconcile states over FLEET."""
    meta = xr["metadata"]
    deployment = api.parse_deployment(xr, namespace_labels={})
    return api.demand_manifest(statements([deployment], [read_cluster(struct(c)) for c in FLEET])[0]) | {
        "metadata": {"name": meta["name"], "namespace": meta["namespace"]}
    }


@dataclass(frozen=True)
class Case:
    name: str
    memo: Callable[[], Memo[Any]]  # whose read runs out of memory
    failing: tuple[str, str]  # (namespace, name) of the object it fails on


CASES = (
    Case(name="another deployment", memo=lambda: requirements._DEMANDS, failing=("team-a", "big")),
    Case(name="an InferenceCluster", memo=lambda: requirements._CLUSTERS, failing=("", "a")),
    Case(
        name="another deployment's ModelReplica",
        memo=lambda: requirements._LEDGER,
        failing=("team-c", OTHER["metadata"]["name"]),
    ),
)


def _results(rsp: fnv1.RunFunctionResponse) -> list[tuple[int, str]]:
    return [(r.severity, r.message) for r in rsp.results]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_memory_running_out_while_reading_the_fleet_fails_the_call(
    case: Case,
    run_function: Callable[[fnv1.RunFunctionRequest], fnv1.RunFunctionResponse],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    memo = case.memo()
    read = memo._read

    def exhausted(struct: struct_pb2.Struct) -> Any:
        if identity(struct) == case.failing:
            raise MemoryError
        return read(struct)

    clear_all()
    monkeypatch.setattr(memo, "_read", exhausted)
    required: Mapping[str, Any] = {**resolved(clusters=FLEET, replicas=[OTHER]), "demands": [demand_of(BIG)]}
    rsp = run_function(request(SMALL, required=required))
    assert _results(rsp) == [(fnv1.SEVERITY_FATAL, "internal error composing ModelDeployment: MemoryError: ")]
