"""Fleet quotas and priorities over real gRPC: the platform's objects decide, a tenant's cannot.

The fleet (as in test_fleet_demand): cluster a has one 8x H100 node, cluster b one 8x A100 node.
`small` (team-b) needs any one GPU and holds a's node; `filler` (team-c) holds b's, so `small`
has nowhere to move. `big` (team-a) needs eight H100s: only a fits it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane import api
from modelplane.rollout import revision

from .conftest import as_dict
from .factories import API, H100, cluster, deployment, namespace, pool_kind_of, request, with_ready
from .test_fleet_demand import ANY_GPU, BIG, FLEET, SMALL, SMALL_ON_A, key, raw_demand, victim, world
from .wants import replica

RunFunction = Callable[[fnv1.RunFunctionRequest], fnv1.RunFunctionResponse]
HOPPER = H100  # the H100 selector the deployments use
FILLER = deployment(name="filler", namespace="team-c", cel=ANY_GPU)
FILLER_ON_B = with_ready(replica("b", deployment="filler", namespace="team-c", cel=ANY_GPU))
SMALL_MAX_SURGE_0 = {**SMALL, "spec": {**SMALL["spec"], "rollout": {"maxSurge": 0, "maxUnavailable": 1}}}


def fleet_quota(name: str, *namespaces: str, **gpus: Any) -> dict[str, Any]:
    """A FleetQuota for `namespaces` with one kind of GPU, hopper, and `gpus` (guaranteed, limit) on it."""
    spec: dict[str, Any] = {"namespaces": list(namespaces), "gpus": [{"name": "hopper", "cel": HOPPER, **gpus}]}
    return {"apiVersion": API, "kind": "FleetQuota", "metadata": {"name": name}, "spec": spec}


def priority_class(name: str, value: int) -> dict[str, Any]:
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name}, "value": value}


def run(
    run_function: RunFunction, platform: Sequence[Mapping[str, Any]], *, others: Sequence[Mapping[str, Any]] = ()
) -> dict[str, Any]:
    """small's whole response with its Ready replica on a, filler's on b, `others` stated, and the platform's objects."""
    objects = world(FLEET, replicas=[SMALL_ON_A, FILLER_ON_B], others=[FILLER, *others])
    return victim(run_function, [*objects, *platform], xr=SMALL, observed={key("a"): SMALL_ON_A})


def _warnings(response: Mapping[str, Any]) -> list[tuple[str, str]]:
    return [
        (r["reason"], r["message"])
        for r in response.get("results", [])
        if r.get("severity") == "SEVERITY_WARNING" and r["reason"] != "InsufficientCapacity"
    ]


def test_a_team_within_its_guarantee_reclaims_the_node_a_borrower_holds(run_function: RunFunction) -> None:
    got = run(run_function, [fleet_quota("search", "team-a", guaranteed=8)], others=[BIG])
    name = SMALL_ON_A["metadata"]["name"]
    assert (sorted(got["desired"]["resources"]), _warnings(got)) == (
        ["demand"],
        [
            (
                "Reclaimed",
                "Scheduled 0 of 1 replicas; 0/2 clusters are available for the rest: 2 had no pool with enough free "
                f"nodes. Reclaimed {name} (1 node of a/pool) for a team within its fleet quota guarantee: it leaves "
                "now, without a successor.",
            )
        ],
    )


@pytest.mark.parametrize(
    "platform",
    [
        pytest.param([], id="no quota"),
        pytest.param([fleet_quota("search", "team-a", limit=64)], id="a limit but no guarantee"),
        pytest.param(
            [fleet_quota("search", "team-a", guaranteed=8), fleet_quota("research", "team-b", guaranteed=8)],
            id="the borrower is within its own guarantee",
        ),
    ],
)
def test_nothing_is_reclaimed_without_a_guarantee_to_honour(
    run_function: RunFunction, platform: list[dict[str, Any]]
) -> None:
    got = run(run_function, platform, others=[BIG])
    assert (sorted(got["desired"]["resources"]), _warnings(got)) == (["demand", key("a")], [])


def test_a_forged_statement_cannot_raise_its_own_priority(run_function: RunFunction) -> None:
    """team-x writes a ModelDemand naming a priority class its namespace may not use: it preempts nobody."""
    platform = [
        fleet_quota("experiments", "team-x", limit=64) | {"spec": {"namespaces": ["team-x"], "preemption": "Any"}},
        priority_class("critical", 1000),
    ]
    forged = raw_demand(
        priorityClassName="critical",
        clusters=["a"],
        engines=[{"name": "main", "options": [{"poolKinds": [pool_kind_of(FLEET[0])], "nodes": 1}]}],
    )
    alone = run(run_function, platform)
    assert run(run_function, [*platform, forged]) == alone
    assert sorted(alone["desired"]["resources"]) == ["demand", key("a")]


def test_the_limit_says_quota_exceeded_and_status_shows_the_use(run_function: RunFunction) -> None:
    two = [cluster("a", nodes=2), cluster("b", nodes=1, product="A100")]
    llm = deployment(name="llm", replicas=2, gpus=8)
    objects = [*world(two), fleet_quota("search", "team-a", guaranteed=8, limit=8)]
    got = victim(run_function, objects, xr=llm)
    status = got["desired"]["composite"]["resource"]["status"]
    (scheduled,) = (c for c in got["conditions"] if c["type"] == "ReplicasScheduled")
    assert (scheduled["reason"], status["quota"]) == (
        "QuotaExceeded",
        {"name": "search", "gpus": [{"name": "hopper", "guaranteed": 8, "used": 8, "borrowed": 0, "limit": 8}]},
    )


SELECTING_SEARCH = {"matchLabels": {"team": "search"}}


@dataclass(frozen=True)
class QuotaCase:
    name: str
    spec: Mapping[str, Any]
    want_condition: tuple[str, str, str]  # status, reason, message
    want_namespaces: list[str] | None = None  # status.namespaces published; None: not published


QUOTA_CASES = [
    QuotaCase(
        "a quota deployments can read is accepted and says what it guarantees",
        {"namespaces": ["team-a"], "gpus": [{"name": "hopper", "cel": H100, "guaranteed": 8, "limit": 16}]},
        ("True", "Accepted", "preemption Never; hopper: 8 guaranteed, at most 16"),
    ),
    QuotaCase(
        "a selector's namespaces are published for the deployments of other namespaces",
        {"namespaceSelector": SELECTING_SEARCH, "gpus": [{"name": "hopper", "cel": H100, "guaranteed": 8}]},
        ("True", "Accepted", "preemption Never; hopper: 8 guaranteed"),
        ["search-dev", "search-prod"],
    ),
    QuotaCase(
        "a selector that does not compile is refused on the quota itself",
        {"namespaces": ["team-a"], "gpus": [{"name": "hopper", "cel": "device.driver ==", "guaranteed": 8}]},
        ("False", "InvalidSpec", "deployments cannot read this quota, so it holds for nobody: spec.gpus[0].cel: "),
    ),
    QuotaCase(
        "a limit below the guarantee is refused",
        {"namespaces": ["team-a"], "gpus": [{"name": "hopper", "cel": H100, "guaranteed": 8, "limit": 4}]},
        (
            "False",
            "InvalidSpec",
            "deployments cannot read this quota, so it holds for nobody: spec.gpus[0]: limit 4 is below guaranteed 8",
        ),
    ),
]


@pytest.mark.parametrize("case", QUOTA_CASES, ids=lambda c: c.name)
def test_a_fleet_quota_checks_itself(run_function: RunFunction, case: QuotaCase) -> None:
    xr = {"apiVersion": API, "kind": "FleetQuota", "metadata": {"name": "search"}, "spec": dict(case.spec)}
    spaces = [
        namespace("search-prod", labels={"team": "search"}),
        namespace("search-dev", labels={"team": "search"}),
        namespace("team-b", labels={"team": "research"}),
    ]
    got = as_dict(run_function(request(xr, required={"namespaces": spaces})))
    (c,) = got["conditions"]
    status = got["desired"]["composite"].get("resource", {}).get("status", {})
    condition = (c["status"].removeprefix("STATUS_CONDITION_").title(), c["reason"], c["message"])
    assert (condition[:2], condition[2].startswith(case.want_condition[2]), status.get("namespaces")) == (
        case.want_condition[:2],
        True,
        case.want_namespaces,
    ), condition


def _with_priority(xr: dict[str, Any], priority_class: str) -> dict[str, Any]:
    xr["spec"]["template"]["spec"]["scheduling"] = {"priorityClassName": priority_class}
    return xr


# Cluster a lets team-a use both priority classes (its KAI rules); b's node is taken by filler.
OPEN_A = cluster("a", nodes=1)
OPEN_A["spec"]["kai"] = {"namespaces": [{"namespace": "team-a", "priorityClassNames": ["critical", "train"]}]}
LOW = _with_priority(deployment(name="low", cel=ANY_GPU), "train")
HIGH = _with_priority(deployment(name="high", gpus=8), "critical")
LOW_ON_A = with_ready(replica("a", deployment="low", cel=ANY_GPU, revision=revision(api.parse_deployment(LOW))))
LOW_ON_A["spec"]["scheduling"] = {"queue": "default-queue", "priorityClassName": "train"}
CLASSES = [priority_class("train", 50), priority_class("critical", 1000)]


@pytest.mark.parametrize(
    ("preemption", "high", "want_left"),
    [
        pytest.param("WithinQuota", HIGH, [], id="higher priority of the same team preempts"),
        pytest.param("Never", HIGH, [key("a")], id="preemption off: it waits"),
        pytest.param(
            "WithinQuota",
            _with_priority(deployment(name="high", gpus=8), "train"),
            [key("a")],
            id="equal priority never",
        ),
    ],
)
def test_preemption_over_grpc(
    run_function: RunFunction, preemption: str, high: dict[str, Any], want_left: list[str]
) -> None:
    quota = fleet_quota("search", "team-a") | {"spec": {"namespaces": ["team-a"], "preemption": preemption}}
    objects = [
        *world([OPEN_A, FLEET[1]], replicas=[LOW_ON_A, FILLER_ON_B], others=[FILLER, high]),
        quota,
        *CLASSES,
    ]
    got = victim(run_function, objects, xr=LOW, observed={key("a"): LOW_ON_A})
    warned = [reason for reason, _ in _warnings(got) if reason == "Preempted"]
    assert (sorted(k for k in got["desired"]["resources"] if k != "demand"), warned) == (
        want_left,
        [] if want_left else ["Preempted"],
    )
