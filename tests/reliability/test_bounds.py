"""Every input is bounded before per-item work, and every answer fits what Crossplane accepts (real gRPC).

spec.replicas and every list the XRD bounds are checked before anything is converted or placed
item by item: 40,000 replicas (89 s before) or an env list of 10,000 are refused at once with
InvalidSpec, the running replica kept. A valid deployment whose answer would exceed the 4 MiB
Crossplane accepts (1,024 replicas with 40 env vars each) keeps what exists and says why, instead
of an answer gRPC refuses on every call; when even that does not fit, the answer is FATAL, which
changes nothing.
"""

from dataclasses import dataclass
from typing import Any

import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from tests.function.conftest import as_dict, grpc_server
from tests.function.factories import cluster, deployment, request, resolved, with_ready
from tests.function.wants import MD_REQUIREMENTS, condition, replica, response, result

from .conftest import RunFunction

ENV = [{"name": f"VAR_{i}", "value": "x" * 60} for i in range(40)]


def with_env(xr: dict[str, Any], env: list[dict[str, str]]) -> dict[str, Any]:
    xr["spec"]["template"]["spec"]["engines"][0]["members"][0]["template"]["spec"]["containers"][0]["env"] = env
    return xr


def observed(cluster_name: str, index: int = 0) -> dict[str, Any]:
    obj = with_ready(replica(cluster_name, index))
    obj["metadata"]["annotations"] = {"crossplane.io/composition-resource-name": f"replica-{cluster_name}-{index}"}
    return obj


def kept(problem: dict[str, str], *, desired: int) -> dict[str, Any]:
    """The answer that keeps the one running replica and reports `problem` (a ReplicasScheduled condition)."""
    ready = (
        condition("ReplicasReady", "True", "AllReplicasReady", "1 of 1 replicas are ready.")
        if desired == 1
        else condition("ReplicasReady", "False", "ReplicasNotReady", f"1 of {desired} replicas are ready.")
    )
    return response(
        status={"replicas": {"total": 1, "ready": 1}},
        resources={"replica-a-0": (replica("a"), True)},
        conditions=[problem, ready],
        results=[result("WARNING", problem["reason"], problem["message"])],
        requirements=MD_REQUIREMENTS,
    )


@dataclass(frozen=True)
class Case:
    name: str
    req: fnv1.RunFunctionRequest
    want: dict[str, Any]


def running(xr: dict[str, Any]) -> fnv1.RunFunctionRequest:
    return request(
        xr,
        observed={"replica-a-0": observed("a")},
        required=resolved(clusters=[cluster("a", nodes=1100)], replicas=[observed("a")]),
    )


TOO_LARGE = (
    "the desired state is about 4.8 MiB, over the 4.0 MiB a function response may carry (Crossplane's gRPC receive "
    "limit, which no setting raises): the existing replicas are kept and nothing new is composed; lower "
    "spec.replicas or what each replica carries (pod template, env)"
)
ENV_PATH = "spec.template.spec.engines[0].members[0].template.spec.containers[0].env"

CASES = [
    Case(
        name="40,000 replicas are refused before any is placed",
        req=running(deployment(replicas=40_000)),
        want=kept(
            condition(
                "ReplicasScheduled", "False", "InvalidSpec", "spec.replicas: Input should be less than or equal to 1024"
            ),
            desired=40_000,
        ),
    ),
    Case(
        name="an env list of 10,000 is refused before any item is read",
        req=running(with_env(deployment(), [{"name": f"V{i}"} for i in range(10_000)])),
        want=kept(
            condition(
                "ReplicasScheduled", "False", "InvalidSpec", f"{ENV_PATH}: at most 128 items are allowed, got 10000"
            ),
            desired=1,
        ),
    ),
    Case(
        name="an answer larger than Crossplane accepts keeps the running replica and says why",
        req=running(with_env(deployment(replicas=1024), ENV)),
        want=kept(condition("ReplicasScheduled", "False", "ResponseTooLarge", TOO_LARGE), desired=1024),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_inputs_are_bounded_and_answers_fit(grpc_function: RunFunction, case: Case) -> None:
    assert as_dict(grpc_function(case.req)) == case.want


BIG_ENV = [{"name": f"VAR_{i}", "value": "x" * 250} for i in range(128)]  # the XRD's most env vars


def test_when_even_the_running_replicas_do_not_fit_the_answer_changes_nothing() -> None:
    own = {f"replica-a-{i}": with_env_replica(i) for i in range(140)}
    req = request(
        with_env(deployment(replicas=140), BIG_ENV),
        observed=own,
        required=resolved(clusters=[cluster("a", nodes=1100)], replicas=list(own.values())),
    )
    with grpc_server(max_receive_mib=32) as call:
        got = as_dict(call(req))
    assert got == {
        "meta": {"tag": "t", "ttl": "60s"},
        "desired": {},
        "context": {},
        "results": [
            {
                "severity": "SEVERITY_FATAL",
                "message": "the response composing ModelDeployment is 5.1 MiB, over the 4.0 MiB Crossplane accepts: "
                "nothing was changed",
            }
        ],
    }


def with_env_replica(index: int) -> dict[str, Any]:
    obj = observed("a", index)
    obj["spec"]["engines"][0]["members"][0]["template"]["spec"]["containers"][0]["env"] = BIG_ENV
    return obj
