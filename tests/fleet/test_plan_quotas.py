"""The fleet plan's text: every FleetQuota's use of the final fleet, and the evictions on the way."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from modelplane.fleet import DeploymentOutcome, build, build_plan
from modelplane.fleet.plan import plan_text
from modelplane.quota import FleetQuota, QuotaResource
from modelplane.scheduler.policy import FleetPolicy

from tests.fleet.factories import result
from tests.scheduler.factories import cluster, deployment, gpu_engines, is_model, observed

CHAT = deployment("chat", namespace="team-a", replicas=2, engines=gpu_engines(8))
CHAT_A0 = observed(CHAT, cluster="a", index=0, pools="h100")
CHAT_A1 = observed(CHAT, cluster="a", index=1, pools="h100")
CLUSTERS = [cluster("a")]
SEARCH = FleetQuota(
    name="search",
    namespaces=("team-a",),
    resources=(QuotaResource(name="hopper", selector=is_model("H100"), guaranteed=8, limit=32),),
)
OTHERS = FleetQuota(
    name="others", namespaces=("team-z",), resources=(QuotaResource(name="hopper", selector=is_model("H100")),)
)


@dataclass(frozen=True)
class Case:
    name: str
    policy: FleetPolicy | None
    evictions: tuple[str, ...]
    want: list[str]  # the lines between the deployment table and the rest


CASES = [
    Case("no quota, no eviction: nothing more is said", None, (), []),
    Case(
        "each quota's use of the final fleet, borrowed beyond the guarantee; a quota nobody uses shows zero",
        FleetPolicy(quotas=(SEARCH, OTHERS)),
        (),
        [
            "Fleet quotas after the plan (GPUs):",
            "  QUOTA   GPUS    GUARANTEED  USED  BORROWED  LIMIT",
            "  others  hopper  0           0     0         -",
            "  search  hopper  8           16    8         32",
        ],
    ),
    Case(
        "evictions are listed in the order they happened",
        None,
        ("round 1: team-b/x: Reclaimed x-a-0 (1 node of a/h100)", "round 2: team-b/x: Preempted x-a-1"),
        [
            "Reclaimed and preempted during the plan:",
            "  round 1: team-b/x: Reclaimed x-a-0 (1 node of a/h100)",
            "  round 2: team-b/x: Preempted x-a-1",
        ],
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_plan_text_tells_quotas_and_evictions(case: Case) -> None:
    view = build(CHAT, CLUSTERS, [], result(desired=2, created=[CHAT_A0, CHAT_A1], total_clusters=1))
    plan = build_plan(
        CLUSTERS,
        [CHAT_A0, CHAT_A1],
        [DeploymentOutcome(view=view, reason="Scheduled", message="Scheduled 2 of 2 replicas.")],
        created=frozenset({CHAT_A0.name, CHAT_A1.name}),
        rounds=1,
        converged=True,
        policy=case.policy,
        evictions=case.evictions,
    )
    lines = plan_text(plan).splitlines()
    start = lines.index("Fleet after the plan (nodes per pool):")
    table_end = next(i for i, line in enumerate(lines) if line.startswith("  team-a/chat"))
    assert lines[table_end + 1 : start] == case.want
