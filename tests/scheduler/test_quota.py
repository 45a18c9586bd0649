"""Fleet quotas and priorities (scheduler/policy.py): limits, ranking, reclaim and preemption."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType

import pytest
from modelplane.model import Cluster, Deployment, KaiAllowance, ModelReplica
from modelplane.quota import FleetQuota, Preemption, PriorityClasses, QuotaResource, QuotaStanding
from modelplane.scheduler import schedule
from modelplane.scheduler.policy import FleetPolicy
from modelplane.scheduler.state import statements
from modelplane.stated import StatedDemand

from tests.scheduler.factories import (
    IS_GPU,
    Outline,
    cluster,
    deployment,
    gpu_engines,
    is_model,
    observed,
    outline,
    pool,
)

HOPPER = is_model("H100")
PRIORITIES = PriorityClasses(values=MappingProxyType({"train": 50, "inference": 125, "critical": 1000}))
# Every team may use every priority class below on every cluster (their KAI rules).
OPEN = MappingProxyType(
    {ns: KaiAllowance(priority_class_names=("critical", "train")) for ns in ("team-a", "team-b", "team-c")}
)
# One H100 node on a, one A100 node on b: an H100-only model fits only a.
FLEET = (
    replace(cluster("a", pools=[pool("h100", nodes=1)]), kai_namespaces=OPEN),
    replace(cluster("b", pools=[pool("a100", nodes=1, model="A100")]), kai_namespaces=OPEN),
)
TWO_H100 = (replace(FLEET[0], pools=(pool("h100", nodes=2),)), FLEET[1])


def quota(
    name: str,
    *namespaces: str,
    guaranteed: int = 0,
    limit: int | None = None,
    preemption: Preemption = Preemption.NEVER,
    max_evictions: int = 1,
) -> FleetQuota:
    return FleetQuota(
        name=name,
        namespaces=namespaces,
        resources=(QuotaResource(name="hopper", selector=HOPPER, guaranteed=guaranteed, limit=limit),),
        preemption=preemption,
        max_evictions=max_evictions,
    )


def policy(*quotas: FleetQuota) -> FleetPolicy:
    return FleetPolicy(quotas=quotas, priorities=PRIORITIES)


def hopper(name: str, *, namespace: str = "team-a", replicas: int = 1, priority: str | None = None) -> Deployment:
    """A deployment of 8-GPU H100-only replicas."""
    return deployment(
        name, namespace=namespace, replicas=replicas, engines=gpu_engines(8, model="H100"), priority_class_name=priority
    )


def anywhere(name: str, *, namespace: str = "team-a", replicas: int = 1, gpus: int = 8) -> Deployment:
    """A deployment whose replicas fit any GPU node."""
    return deployment(name, namespace=namespace, replicas=replicas, engines=gpu_engines(gpus))


def pinned(d: Deployment) -> Deployment:
    """`d` with a rollout that never moves its replicas (maxSurge 0): only eviction takes them."""
    return replace(d, movable=False)


@dataclass(frozen=True)
class Case:
    name: str
    deployment: Deployment
    others: Sequence[Deployment]
    policy: FleetPolicy
    fleet: Sequence[ModelReplica] = ()
    clusters: Sequence[Cluster] = FLEET
    want: Outline = field(default_factory=Outline)
    moves: tuple[str, ...] = ()
    reserved: tuple[tuple[str, int], ...] = ()


def run(case: Case) -> tuple[Outline, tuple[str, ...], tuple[tuple[str, int], ...]]:
    everyone = [case.deployment, *case.others]
    result = schedule(
        case.deployment, case.clusters, case.fleet, demands=stated(everyone, case.clusters), policy=case.policy
    )
    reserved = tuple((r.deployment, r.replicas) for r in result.diagnosis.reserved)
    return outline(result), tuple(m.text() for m in result.moves), reserved


LIMIT_CASES = [
    Case(
        "a limit of 8 Hopper GPUs places one 8-GPU H100 replica of two",
        hopper("llm", replicas=2),
        [],
        policy(quota("search", "team-a", limit=8)),
        clusters=TWO_H100,
        want=Outline(
            replicas=("a/0 main@h100",),
            created=("a/0",),
            message="Scheduled 1 of 2 replicas; 0/2 clusters are available for the rest: "
            "1 had no pool matching an engine's devices, "
            "1 would take the namespace's fleet quota past its limit.",
        ),
    ),
    Case(
        "the limit steers a flexible replica off Hopper once the team's Hopper GPUs are spent",
        anywhere("llm", replicas=2),
        [],
        policy(quota("search", "team-a", limit=8)),
        clusters=TWO_H100,
        want=Outline(
            replicas=("a/0 main@h100", "b/0 main@a100"), created=("a/0", "b/0"), message="Scheduled 2 of 2 replicas."
        ),
    ),
    Case(
        "the team's other deployments count against the limit",
        hopper("llm"),
        [hopper("other")],
        policy(quota("search", "team-a", limit=8)),
        fleet=[observed(hopper("other"), cluster="a", index=0, pools="h100")],
        clusters=TWO_H100,
        want=Outline(
            message="Scheduled 0 of 1 replicas; 0/2 clusters are available for the rest: "
            "1 had no pool matching an engine's devices, "
            "1 would take the namespace's fleet quota past its limit."
        ),
    ),
    Case(
        "another team's use does not count",
        hopper("llm"),
        [hopper("other", namespace="team-b")],
        policy(quota("search", "team-a", limit=8)),
        fleet=[observed(hopper("other", namespace="team-b"), cluster="a", index=0, pools="h100")],
        clusters=TWO_H100,
        want=Outline(replicas=("a/0 main@h100",), created=("a/0",), message="Scheduled 1 of 1 replicas."),
    ),
    Case(
        "no quota object: no limit",
        hopper("llm", replicas=2),
        [],
        policy(),
        clusters=TWO_H100,
        want=Outline(
            replicas=("a/0 main@h100", "a/1 main@h100"), created=("a/0", "a/1"), message="Scheduled 2 of 2 replicas."
        ),
    ),
]


@pytest.mark.parametrize("case", LIMIT_CASES, ids=lambda c: c.name)
def test_the_limit_caps_new_replicas(case: Case) -> None:
    assert run(case)[0] == case.want


RANK_CASES = [
    Case(
        "without priorities, the larger H100 deployment goes first",
        hopper("big"),
        [deployment("half", namespace="team-b", engines=gpu_engines(4, model="H100"))],
        policy(),
        want=Outline(replicas=("a/0 main@h100",), created=("a/0",), message="Scheduled 1 of 1 replicas."),
    ),
    Case(
        "a smaller deployment of higher priority goes first: the larger one holds the room for it",
        hopper("big", priority="train"),
        [deployment("half", namespace="team-b", engines=gpu_engines(4, model="H100"), priority_class_name="critical")],
        policy(),
        want=Outline(
            message="Scheduled 0 of 1 replicas; 0/2 clusters are available for the rest: "
            "1 had no pool matching an engine's devices, 1 had no pool with enough free nodes."
        ),
        reserved=(("team-b/half", 1),),
    ),
    Case(
        "a team within its guarantee goes before a higher priority that borrows",
        hopper("big", namespace="team-b", priority="critical"),
        [deployment("half", engines=gpu_engines(4, model="H100"), priority_class_name="train")],
        policy(quota("search", "team-a", guaranteed=8)),
        want=Outline(
            message="Scheduled 0 of 1 replicas; 0/2 clusters are available for the rest: "
            "1 had no pool matching an engine's devices, 1 had no pool with enough free nodes."
        ),
        reserved=(("team-a/half", 1),),
    ),
]


@pytest.mark.parametrize("case", RANK_CASES, ids=lambda c: c.name)
def test_room_is_held_in_rank(case: Case) -> None:
    got = run(case)
    assert (got[0], got[2]) == (case.want, case.reserved)


BORROWER = pinned(anywhere("borrower", namespace="team-b"))
ON_H100 = observed(BORROWER, cluster="a", index=0, pools="h100")
ON_A100 = observed(anywhere("filler", namespace="team-c"), cluster="b", index=0, pools="a100")
OWNER = hopper("owner")
LOW = pinned(hopper("low", priority="train"))
LOW_ON_H100 = observed(LOW, cluster="a", index=0, pools="h100")
HIGH = hopper("high", priority="critical")
REST = [anywhere("filler", namespace="team-c")]

EVICT_CASES = [
    Case(
        "a team within its guarantee reclaims the only H100 node from a borrower that cannot move",
        BORROWER,
        [OWNER, *REST],
        policy(quota("search", "team-a", guaranteed=8)),
        fleet=[ON_H100, ON_A100],
        want=Outline(
            removed=("a/0: reclaimed for a team within its fleet quota guarantee",),
            message="Scheduled 0 of 1 replicas; 0/2 clusters are available for the rest: 1 had no pool with enough free nodes, 1 had no room held for team-a/owner... ",
        ),
        moves=("team-b/borrower#0 is reclaimed from a/h100 to make room for team-a/owner",),
    ),
    Case(
        "a borrower still starting (not Ready) is reclaimed too: it holds the node all the same",
        BORROWER,
        [OWNER, *REST],
        policy(quota("search", "team-a", guaranteed=8)),
        fleet=[replace(ON_H100, ready=False), ON_A100],
        want=Outline(removed=("a/0: reclaimed for a team within its fleet quota guarantee",)),
        moves=("team-b/borrower#0 is reclaimed from a/h100 to make room for team-a/owner",),
    ),
    Case(
        "without a guarantee nothing is reclaimed",
        BORROWER,
        [OWNER, *REST],
        policy(quota("search", "team-a", limit=64)),
        fleet=[ON_H100, ON_A100],
        want=Outline(replicas=("a/0 main@h100",), message="Scheduled 1 of 1 replicas."),
    ),
    Case(
        "a team within its own guarantee is never reclaimed from",
        BORROWER,
        [OWNER, *REST],
        policy(quota("search", "team-a", guaranteed=8), quota("research", "team-b", guaranteed=8)),
        fleet=[ON_H100, ON_A100],
        want=Outline(replicas=("a/0 main@h100",), message="Scheduled 1 of 1 replicas."),
    ),
    Case(
        "a borrower that can move elsewhere moves instead of being removed",
        anywhere("borrower", namespace="team-b"),
        [OWNER],
        policy(quota("search", "team-a", guaranteed=8)),
        fleet=[observed(anywhere("borrower", namespace="team-b"), cluster="a", index=0, pools="h100")],
        want=Outline(
            replicas=("b/0 main@a100",),
            created=("b/0",),
            removed=("a/0: making room for another deployment",),
            message="Scheduled 1 of 1 replicas.",
        ),
        moves=("team-b/borrower#0 moves off a/h100 to make room for team-a/owner",),
    ),
    Case(
        "higher priority preempts a lower one of its own team when the quota allows it",
        LOW,
        [HIGH, *REST],
        policy(quota("search", "team-a", preemption=Preemption.WITHIN_QUOTA)),
        fleet=[LOW_ON_H100, ON_A100],
        want=Outline(removed=("a/0: preempted by higher-priority demand",), message=""),
        moves=("team-a/low#0 is preempted on a/h100 to make room for team-a/high",),
    ),
    Case(
        "equal priority never preempts",
        pinned(hopper("low", priority="critical")),
        [HIGH, *REST],
        policy(quota("search", "team-a", preemption=Preemption.ANY)),
        fleet=[observed(pinned(hopper("low", priority="critical")), cluster="a", index=0, pools="h100"), ON_A100],
        want=Outline(replicas=("a/0 main@h100",), message="Scheduled 1 of 1 replicas."),
    ),
    Case(
        "preemption off: a higher priority waits",
        LOW,
        [HIGH, *REST],
        policy(quota("search", "team-a")),
        fleet=[LOW_ON_H100, ON_A100],
        want=Outline(replicas=("a/0 main@h100",), message="Scheduled 1 of 1 replicas."),
    ),
    Case(
        "within the team only: another team's lower priority is left alone",
        pinned(hopper("low", namespace="team-b", priority="train")),
        [HIGH, *REST],
        policy(quota("search", "team-a", preemption=Preemption.WITHIN_QUOTA)),
        fleet=[
            observed(pinned(hopper("low", namespace="team-b", priority="train")), cluster="a", index=0, pools="h100"),
            ON_A100,
        ],
        want=Outline(replicas=("a/0 main@h100",), message="Scheduled 1 of 1 replicas."),
    ),
    Case(
        "across teams: another team's borrowed lower priority is preempted",
        pinned(hopper("low", namespace="team-b", priority="train")),
        [HIGH, *REST],
        policy(quota("search", "team-a", preemption=Preemption.ANY)),
        fleet=[
            observed(pinned(hopper("low", namespace="team-b", priority="train")), cluster="a", index=0, pools="h100"),
            ON_A100,
        ],
        want=Outline(removed=("a/0: preempted by higher-priority demand",), message=""),
        moves=("team-b/low#0 is preempted on a/h100 to make room for team-a/high",),
    ),
    Case(
        "across teams: never below the other team's guarantee",
        pinned(hopper("low", namespace="team-b", priority="train")),
        [HIGH, *REST],
        policy(quota("search", "team-a", preemption=Preemption.ANY), quota("research", "team-b", guaranteed=8)),
        fleet=[
            observed(pinned(hopper("low", namespace="team-b", priority="train")), cluster="a", index=0, pools="h100"),
            ON_A100,
        ],
        want=Outline(replicas=("a/0 main@h100",), message="Scheduled 1 of 1 replicas."),
    ),
]


@pytest.mark.parametrize("case", EVICT_CASES, ids=lambda c: c.name)
def test_evictions(case: Case) -> None:
    got = run(case)
    assert (got[0].replicas, got[0].removed, got[1]) == (case.want.replicas, case.want.removed, case.moves)


def test_the_blocked_deployment_sees_the_same_eviction() -> None:
    p = policy(quota("search", "team-a", guaranteed=8))
    everyone = [BORROWER, OWNER, *REST]
    result = schedule(OWNER, FLEET, [ON_H100, ON_A100], demands=stated(everyone, FLEET), policy=p)
    assert tuple(m.text() for m in result.moves) == (
        "team-b/borrower#0 is reclaimed from a/h100 to make room for team-a/owner",
    )


def test_nothing_more_is_evicted_while_room_is_being_freed() -> None:
    """The reclaimed replica is being deleted: the next reconcile waits for it to go, evicting nobody else."""
    p = policy(quota("search", "team-a", guaranteed=16))
    second = pinned(anywhere("second", namespace="team-b"))
    fleet = [replace(ON_H100, deleting=True), ON_A100, observed(second, cluster="a", index=1, pools="h100")]
    clusters = TWO_H100
    everyone = [BORROWER, second, OWNER, *REST]
    result = schedule(second, clusters, fleet, demands=stated(everyone, clusters), policy=p)
    assert (outline(result).removed, result.moves) == ((), ())


def test_evictions_are_paced_per_blocked_deployment() -> None:
    """Two replicas of the owner are blocked by two borrowers: one is reclaimed per round at a pace of one."""
    p = policy(quota("search", "team-a", guaranteed=16, max_evictions=1))
    second = pinned(anywhere("second", namespace="team-b"))
    clusters = TWO_H100
    fleet = [ON_H100, ON_A100, observed(second, cluster="a", index=1, pools="h100")]
    owner = hopper("owner", replicas=2)
    everyone = [BORROWER, second, owner, *REST]
    result = schedule(owner, clusters, fleet, demands=stated(everyone, clusters), policy=p)
    assert tuple(m.text() for m in result.moves) == (
        "team-b/borrower#0 is reclaimed from a/h100 to make room for team-a/owner",
    )


def test_a_statement_cannot_raise_its_own_priority() -> None:
    """A hand-written statement naming a priority class its namespace may not use holds nothing and evicts nobody."""
    p = policy(quota("search", "team-a", preemption=Preemption.ANY))
    # Clusters let team-a use only the default class: `critical` is refused there.
    clusters = tuple(replace(c, kai_namespaces=MappingProxyType({"team-a": KaiAllowance()})) for c in FLEET)
    honest = stated([LOW, hopper("high"), *REST], clusters)
    assert honest is not None
    forged = tuple(replace(s, priority_class="critical") if s.name == "high" else s for s in honest)
    result = schedule(LOW, clusters, [LOW_ON_H100, ON_A100], demands=forged, policy=p)
    assert (outline(result).replicas, result.moves) == (("a/0 main@h100",), ())


def test_status_shows_the_team_use_with_this_calls_decisions() -> None:
    p = FleetPolicy(
        quotas=(
            FleetQuota(
                name="search",
                namespaces=("team-a",),
                resources=(
                    QuotaResource(name="hopper", selector=HOPPER, guaranteed=8, limit=16),
                    QuotaResource(name="any", selector=IS_GPU, guaranteed=0),
                ),
            ),
        ),
    )
    result = schedule(anywhere("llm", replicas=2), TWO_H100, [], policy=p)
    assert result.quota == (
        QuotaStanding(quota="search", resource="hopper", guaranteed=8, used=8, limit=16),
        QuotaStanding(quota="search", resource="any", guaranteed=0, used=16, limit=None),
    )


def test_namespaces_are_selected_by_label() -> None:
    from modelplane.model import LabelSelector

    q = replace(
        quota("search", limit=0), namespace_selector=LabelSelector(match_labels=MappingProxyType({"team": "search"}))
    )
    p = FleetPolicy(quotas=(q,), namespace_labels=MappingProxyType({"team-a": MappingProxyType({"team": "search"})}))
    got = schedule(hopper("llm"), FLEET, [], policy=p)
    other = schedule(hopper("llm", namespace="team-b"), FLEET, [], policy=p)
    assert (outline(got).replicas, outline(other).replicas) == ((), ("a/0 main@h100",))


def stated(deployments: Sequence[Deployment], fleet: Sequence[Cluster]) -> tuple[StatedDemand, ...] | None:
    return statements(deployments, fleet)


def test_among_equals_the_newest_replica_is_reclaimed_first() -> None:
    """Two borrowed replicas of equal priority and size hold the two H100 nodes: the newer one goes."""
    p = policy(quota("search", "team-a", guaranteed=8))
    older = replace(ON_H100, created="2026-01-01T00:00:00Z")
    second = pinned(anywhere("second", namespace="team-b"))
    newer = replace(observed(second, cluster="a", index=0, pools="h100"), created="2026-06-01T00:00:00Z")
    everyone = [BORROWER, second, OWNER, *REST]
    result = schedule(OWNER, TWO_H100, [older, newer, ON_A100], demands=stated(everyone, TWO_H100), policy=p)
    assert tuple(m.text() for m in result.moves) == (
        "team-b/second#0 is reclaimed from a/h100 to make room for team-a/owner",
    )
