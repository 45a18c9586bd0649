"""Device input that cannot be evaluated never removes running replicas (examples/scale-up over gRPC).

A device capacity that stopped parsing is refused where the InferenceCluster is read, so the
deployment keeps both running replicas and says which cluster and field; the InferenceCluster
handler keeps publishing its last good pools.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from tests.function.conftest import as_dict
from tests.function.factories import request

from .conftest import RunFunction
from .scale_up import ScaleUp

SHAPE = "expected a signed decimal number and a suffix (n, u, m, k, M, G, T, P, E, Ki..Ei, or an exponent as in 1e3)"


@dataclass(frozen=True)
class Outcome:
    """What a user sees of one reconcile: the replicas kept or composed, the condition, the events."""

    resources: tuple[str, ...]
    scheduled: tuple[str, str]  # ReplicasScheduled (reason, message)
    results: tuple[tuple[str, str], ...]  # (reason, message) of each result


def outcome(rsp: fnv1.RunFunctionResponse) -> Outcome:
    got = as_dict(rsp)
    scheduled = next(c for c in got["conditions"] if c["type"] == "ReplicasScheduled")
    return Outcome(
        resources=tuple(sorted(got["desired"].get("resources", {}))),
        scheduled=(scheduled["reason"], scheduled["message"]),
        results=tuple((r["reason"], r["message"]) for r in got.get("results", [])),
    )


def kept(reason: str, message: str) -> Outcome:
    """Both running replicas kept, nothing new, the problem reported once as a condition and a warning."""
    return Outcome(
        resources=("replica-eu-west-1-0", "replica-us-east-1-0"),
        scheduled=(reason, message),
        results=((reason, message),),
    )


@dataclass(frozen=True)
class CapacityCase:
    name: str
    value: str
    want: Outcome


def capacity_message(value: str, why: str) -> str:
    field = "status.gpuPools[0].devices[0].capacity.memory.value"
    return f"InferenceCluster us-east-1: {field}: {value!r} {why}"


CAPACITY_CASES = [
    CapacityCase(
        "a capacity written in GB instead of Gi",
        "80GB",
        kept("InvalidSpec", capacity_message("80GB", f"is not a quantity: {SHAPE}")),
    ),
    CapacityCase(
        "a capacity of NaN", "NaN", kept("InvalidSpec", capacity_message("NaN", f"is not a quantity: {SHAPE}"))
    ),
    CapacityCase(
        "a capacity with a billion-digit exponent",
        "1e999999999",
        kept(
            "InvalidSpec", capacity_message("1e999999999", "is not a supported quantity: its exponent is beyond +-999")
        ),
    ),
]


@pytest.mark.parametrize("case", CAPACITY_CASES, ids=lambda c: c.name)
def test_a_capacity_that_stopped_parsing_keeps_the_running_replicas(
    grpc_function: RunFunction, case: CapacityCase
) -> None:
    scenario = ScaleUp().with_capacity("us-east-1", "a100", case.value)  # where replica us-east-1/0 runs
    assert outcome(grpc_function(scenario.request())) == case.want


def test_the_inference_cluster_keeps_its_last_published_pools_when_a_capacity_stops_parsing(
    grpc_function: RunFunction,
) -> None:
    ic = ScaleUp().clusters[0]
    published = ic["status"]["gpuPools"]
    edited = ScaleUp().with_capacity("us-east-1", "a100", "80GB").clusters[0]
    edited["status"]["gpuPools"] = published  # the edit reached the spec; status still holds the last good pools
    got = as_dict(grpc_function(request(edited)))
    message = f"spec.nodePools[0].devices[0].capacity.memory.value: '80GB' is not a quantity: {SHAPE}"
    want: dict[str, Any] = {
        "status": {"gpuPools": published},
        "conditions": [("GPUPoolsPublished", "STATUS_CONDITION_FALSE", "InvalidSpec", message)],
    }
    assert {
        "status": got["desired"]["composite"]["resource"]["status"],
        "conditions": [(c["type"], c["status"], c["reason"], c["message"]) for c in got["conditions"]],
    } == want
