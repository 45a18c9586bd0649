"""Device input that cannot be evaluated never removes running replicas (examples/scale-up over gRPC).

A selector that can never be a bool is refused when it compiles; one that fails to evaluate on
every device it reaches (a typo, an unknown domain, 1/0, an overflow) is refused when the fleet is
known: either way the deployment keeps both running replicas and the condition names the selector
and the error. A device capacity that stopped parsing is refused where the InferenceCluster is
read: that cluster is left out, the replica on it kept exactly as observed, the condition says which
cluster and field, and everything else is scheduled; the InferenceCluster handler keeps publishing
its last good pools.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane.names import replica_name

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


WHERE = "engine main member Standalone device request gpu selector 1"
EVERY_DEVICE = "failed to evaluate on every device it reached (3 device kinds in the fleet)"
PUBLISHED = (
    "devices in the fleet publish attributes gpu.nvidia.com/{architecture, cudaComputeCapability, driverVersion,"
    " productName} and capacity gpu.nvidia.com/{memory}"
)


@dataclass(frozen=True)
class SelectorCase:
    name: str
    cel: str  # replaces the deployment's first selector
    detail: str


SELECTOR_CASES = [
    SelectorCase(
        "a case typo in an attribute name",
        'device.attributes["gpu.nvidia.com"].productname.startsWith("NVIDIA")',
        f'{EVERY_DEVICE}: no such key "productname" (did you mean productName?); {PUBLISHED}',
    ),
    SelectorCase(
        "an attribute that is not a bool, as the whole selector",
        'device.attributes["gpu.nvidia.com"].productName',
        f"{EVERY_DEVICE}: the result is string, not bool; {PUBLISHED}",
    ),
    SelectorCase(
        "a quantity ordered against an int",
        'device.capacity["gpu.nvidia.com"].memory > 5',
        "operator > does not order quantity; use compareTo(), isGreaterThan() or isLessThan()",
    ),
    SelectorCase(
        "a domain no device has",
        'device.attributes["amd.com"].productName == "MI300X"',
        f'{EVERY_DEVICE}: no such key "productName" (productName is published under gpu.nvidia.com); {PUBLISHED}',
    ),
    SelectorCase("a division by zero", "1 / 0 == 1", f"{EVERY_DEVICE}: divide by zero; {PUBLISHED}"),
    SelectorCase("an int overflow", "9223372036854775807 + 1 > 0", f"{EVERY_DEVICE}: integer overflow; {PUBLISHED}"),
]


@pytest.mark.parametrize("case", SELECTOR_CASES, ids=lambda c: c.name)
def test_a_selector_that_cannot_evaluate_keeps_the_running_replicas(
    grpc_function: RunFunction, case: SelectorCase
) -> None:
    message = f"{WHERE} ({case.cel}): {case.detail}"
    got = outcome(grpc_function(ScaleUp().with_selector(0, case.cel).request()))
    assert got == kept("InvalidNodeSelector", message)


@dataclass(frozen=True)
class CapacityCase:
    name: str
    value: str
    want: Outcome


def capacity_message(value: str, why: str) -> str:
    field = "status.gpuPools[0].devices[0].capacity.memory.value"
    return f"InferenceCluster us-east-1: {field}: {value!r} {why}"


PLACED_ELSEWHERE = (
    "ReplicasPlaced",
    f"Placed 2 new replicas: {replica_name('llama-8b', 'ap-south-1', 0)} on ap-south-1, "
    f"{replica_name('llama-8b', 'eu-west-1', 1)} on eu-west-1.",
)


def held_on_us_east(problem: str) -> Outcome:
    """The cluster that cannot be read is left out (its replica kept as observed); the rest is placed."""
    return Outcome(
        resources=("replica-ap-south-1-0", "replica-eu-west-1-0", "replica-eu-west-1-1", "replica-us-east-1-0"),
        scheduled=(
            "Scheduled",
            "Scheduled 4 of 4 replicas. 1 replica kept as observed on us-east-1, whose InferenceCluster cannot be "
            f"read ({problem}).",
        ),
        results=(PLACED_ELSEWHERE,),
    )


CAPACITY_CASES = [
    CapacityCase(
        "a capacity written in GB instead of Gi",
        "80GB",
        held_on_us_east(capacity_message("80GB", f"is not a quantity: {SHAPE}")),
    ),
    CapacityCase("a capacity of NaN", "NaN", held_on_us_east(capacity_message("NaN", f"is not a quantity: {SHAPE}"))),
    CapacityCase(
        "a capacity with a billion-digit exponent",
        "1e999999999",
        held_on_us_east(capacity_message("1e999999999", "is not a supported quantity: its exponent is beyond +-999")),
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
