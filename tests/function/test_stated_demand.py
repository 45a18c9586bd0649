"""The ModelDemand a deployment composes for the others, and the ModelDemand's own check, over real gRPC."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from .conftest import as_dict
from .factories import API, cluster, deployment, namespace, pool_kind_of, request, resolved, with_ready
from .wants import replica

RunFunction = Callable[[fnv1.RunFunctionRequest], fnv1.RunFunctionResponse]
EIGHT = {"nodes": 1, "groups": [{"pods": 1, "devices": 8}], "claimedDevices": 8, "idleDevices": 0}
H100_KIND = pool_kind_of(cluster("a"))


def demand(
    *,
    replicas: int,
    devices: int,
    clusters: list[str],
    engines: bool = True,
    all_except: bool = False,
    movable: bool = True,
) -> dict[str, Any]:
    """The desired `demand` resource of deployment llama in team-a; engines False: it states none."""
    options = [{**EIGHT, "poolKinds": [H100_KIND], "spareKinds": 0, "deviceSize": "0"}]
    return {
        "resource": {
            "apiVersion": API,
            "kind": "ModelDemand",
            "metadata": {"name": "llama", "namespace": "team-a", "labels": {"modelplane.ai/deployment": "llama"}},
            "spec": {
                "deployment": "llama",
                "replicas": replicas,
                "devicesPerReplica": devices,
                "movable": movable,
                "spread": "Preferred",
                "clusterSet": "AllExcept" if all_except else "Listed",
                "clusters": clusters,
                "truncated": False,
                "engines": [{"name": "main", "options": options}] if engines else [],
            },
        },
        "ready": "READY_TRUE",
    }


@dataclass(frozen=True)
class Case:
    name: str
    xr: Mapping[str, Any]
    required: Mapping[str, Any]
    want: dict[str, Any] | None  # the `demand` resource; None: none is composed
    observed: Mapping[str, Mapping[str, Any]] | None = None


TAINTED = cluster("c", taints=[{"key": "maintenance", "effect": "NoSchedule"}])
RUNNING = {"replica-a-0": with_ready(replica("a", gpus=8))}
CASES = [
    Case(
        "a deployment states what it wants, the clusters it may not use, and per engine the pool kinds it fits",
        deployment(replicas=3, gpus=8),
        # d has no H100 pool: named neither way, its pools are of no kind the engine states
        resolved(clusters=[cluster("b"), cluster("a"), TAINTED, cluster("d", product="A100")]),
        demand(replicas=3, devices=8, clusters=["c"], all_except=True),
    ),
    Case(
        "its steady state states the same: others lack nothing of it then",
        deployment(replicas=1, gpus=8),
        resolved(clusters=[cluster("a")], replicas=list(RUNNING.values())),
        demand(replicas=1, devices=8, clusters=[], all_except=True),
        observed=RUNNING,
    ),
    Case(
        "clusters that refuse its namespace by labels are not stated",
        deployment(replicas=1, gpus=8),
        resolved(
            clusters=[
                {
                    **cluster("a"),
                    "spec": {
                        **cluster("a")["spec"],
                        "allowedNamespaceSelector": {"matchLabels": {"tier": "gold"}},
                    },
                },
                cluster("b"),
            ],
            ns=namespace("team-a", labels={"tier": "silver"}),
        ),
        demand(replicas=1, devices=8, clusters=["b"]),
    ),
    Case(
        "a device selector that does not compile states no demand, and its replica stays",
        deployment(replicas=1, gpus=8, cel="device.driver =="),
        resolved(clusters=[cluster("a")], replicas=list(RUNNING.values())),
        demand(replicas=0, devices=0, clusters=[], engines=False, movable=False),
        observed=RUNNING,
    ),
    Case(
        "while its requirements are unanswered it states no demand",
        deployment(replicas=2, gpus=8),
        {},
        demand(replicas=0, devices=0, clusters=[], engines=False, movable=False),
    ),
    Case(
        "a name no label can carry composes no ModelDemand",
        deployment(name="x" * 64, gpus=8),
        resolved(clusters=[cluster("a")]),
        None,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_the_statement_a_deployment_composes(run_function: RunFunction, case: Case) -> None:
    got = as_dict(run_function(request(case.xr, observed=case.observed, required=case.required)), demand=True)
    assert got["desired"].get("resources", {}).get("demand") == case.want


def _statement(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": API,
        "kind": "ModelDemand",
        "metadata": {"name": "llama", "namespace": "team-a"},
        "spec": {"deployment": "llama", "replicas": 2, "devicesPerReplica": 8, **spec},
    }


@pytest.mark.parametrize(
    ("name", "xr", "want"),
    [
        (
            "a statement others can read is Ready and says what it states",
            _statement(
                clusters=["a"],
                engines=[{"name": "main", "options": [{**EIGHT, "poolKinds": [H100_KIND]}]}],
                movable=True,
            ),
            ("STATUS_CONDITION_TRUE", "Stated", "llama states 2 replicas of 8 devices each", "READY_TRUE"),
        ),
        (
            "a statement of no demand says so",
            _statement(),
            (
                "STATUS_CONDITION_TRUE",
                "Stated",
                "llama states no demand: it has no pool to ask for, or it cannot decide now",
                "READY_TRUE",
            ),
        ),
        (
            "a statement nobody can read says why, where the platform sees it",
            _statement(replicas=-1),
            (
                "STATUS_CONDITION_FALSE",
                "InvalidSpec",
                "other deployments cannot read this statement, so they hold no room for it: spec.replicas: Input "
                "should be greater than or equal to 0",
                "READY_FALSE",
            ),
        ),
    ],
)
def test_a_model_demand_checks_itself(
    run_function: RunFunction, name: str, xr: dict[str, Any], want: tuple[str, ...]
) -> None:
    got = as_dict(run_function(request(xr)))
    (c,) = (c for c in got["conditions"] if c["type"] == "DemandStated")
    assert (c["status"], c["reason"], c["message"], got["desired"]["composite"]["ready"]) == want, name
