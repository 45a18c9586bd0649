"""Other deployments' demand over real gRPC: room held for larger ones, moves that make room, and
what another tenant can do to a deployment through them (nothing beyond those rules).

The fleet: cluster a has one 8x H100 node, cluster b one 8x A100 node. `big` (team-a) needs eight
H100s (only a fits it); `small` (team-b) needs any one GPU. A deployment learns of the others
through their ModelDemands (the `demands` requirement), each composed by that deployment's own
reconcile: `stated()` runs that reconcile through the function and takes what it composes.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from modelplane.names import replica_name

from tests.reliability.mutate import mutations

from .conftest import as_dict
from .factories import API, cluster, deployment, namespace, pool_kind_of, request, resolved, with_ready
from .wants import replica

RunFunction = Callable[[fnv1.RunFunctionRequest], fnv1.RunFunctionResponse]
ANY_GPU = 'device.driver == "gpu.nvidia.com"'
FLEET = [cluster("a", nodes=1), cluster("b", nodes=1, product="A100")]
BIG = deployment(name="big", gpus=8)
SMALL = deployment(name="small", namespace="team-b", cel=ANY_GPU)
SMALL_ON_A = with_ready(replica("a", deployment="small", namespace="team-b", cel=ANY_GPU))
LONG_NAMED = deployment(name="x" * 64, gpus=8)  # refused by its own reconcile (not a label value)
UNPLACEABLE = deployment(name="huge", replicas=64, gpus=16)  # no node has sixteen GPUs


def typo(cel: str) -> dict[str, Any]:
    """A larger deployment of team-c whose device selector its own reconcile refuses."""
    return deployment(name="typo", namespace="team-c", gpus=8, cel=cel)


def key(cluster_name: str) -> str:
    return f"replica-{cluster_name}-0"


def answered(
    run_function: RunFunction, xr: Mapping[str, Any], world: Sequence[Mapping[str, Any]], **kw: Any
) -> dict[str, Any]:
    """`xr`'s whole response once the requirements it declares are answered from `world`, as the API server would.

    Nothing here decides what the function reads of other tenants: it reads what it asks for.
    """
    first = run_function(request(xr, **kw))
    required: dict[str, list[Mapping[str, Any]]] = {}
    for name, selector in first.requirements.resources.items():
        required[name] = [obj for obj in world if _selected(obj, selector)]
    return as_dict(run_function(request(xr, required=required, **kw)), demand=True)


def _selected(obj: Mapping[str, Any], selector: Any) -> bool:
    """Whether the API server would answer `selector` with `obj` (a mangled object is of no kind)."""
    meta: Any = obj.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    labels: Any = meta.get("labels")
    labels = labels if isinstance(labels, dict) else {}
    return (
        (obj.get("apiVersion"), obj.get("kind")) == (selector.api_version, selector.kind)
        and (not selector.match_name or meta.get("name") == selector.match_name)
        and all(labels.get(k) == v for k, v in selector.match_labels.labels.items())
    )


def world(
    fleet: Sequence[Mapping[str, Any]],
    *,
    replicas: Sequence[Mapping[str, Any]] = (),
    others: Sequence[Mapping[str, Any]] = (),
    labels: Mapping[str, Mapping[str, str]] | None = None,
) -> list[Mapping[str, Any]]:
    """Every object of the control plane: the fleet, the replicas, the deployments and every Namespace."""
    spaces = {"team-a", "team-b", "team-c", "team-x", *(xr["metadata"]["namespace"] for xr in others)}
    return [
        *fleet,
        *replicas,
        *others,
        *(namespace(ns, labels=(labels or {}).get(ns)) for ns in sorted(spaces)),
    ]


def stated(
    run_function: RunFunction, xr: Mapping[str, Any], objects: Sequence[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """The ModelDemand `xr`'s own reconcile composes over `objects` (none when it composes none)."""
    resource = answered(run_function, xr, objects)["desired"].get("resources", {}).get("demand")
    return [] if resource is None else [resource["resource"]]


def victim(
    run_function: RunFunction,
    objects: Sequence[Mapping[str, Any]],
    *,
    xr: Mapping[str, Any] = SMALL,
    observed: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """The whole response to `xr`'s reconcile in a control plane holding `objects` and, for every
    deployment among them, the ModelDemand its own reconcile composed."""
    others = [o for o in objects if o.get("kind") == "ModelDeployment"]
    demands = [d for o in others for d in stated(run_function, o, objects)]
    return answered(run_function, xr, [*objects, *demands], observed=observed or {})


def raw_demand(**spec: Any) -> dict[str, Any]:
    """A ModelDemand as someone other than a deployment's reconcile might write it (team-x)."""
    return {
        "apiVersion": API,
        "kind": "ModelDemand",
        "metadata": {"name": "forged", "namespace": "team-x"},
        "spec": {"deployment": "forged", "replicas": 1, "devicesPerReplica": 64, "movable": True, **spec},
    }


ON_A = {
    "clusters": ["a"],
    "engines": [
        {
            "name": "main",
            "options": [
                {
                    "poolKind": pool_kind_of(FLEET[0]),
                    "nodes": 1,
                    "groups": [{"pods": 1, "devices": 8}],
                    "claimedDevices": 8,
                }
            ],
        }
    ],
}


@dataclass(frozen=True)
class Hostile:
    """Another tenant's objects, which must leave the victim's whole response as it is without them."""

    name: str
    deployments: Sequence[Mapping[str, Any]] = ()  # stated through their own reconciles
    raw: Sequence[Mapping[str, Any]] = ()  # ModelDemands as given
    fleet: Sequence[Mapping[str, Any]] = field(default_factory=lambda: FLEET)
    labels: Mapping[str, Mapping[str, str]] | None = None  # Namespace labels, by namespace


ADMITS_GOLD_ONLY = {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["gold"]}]}
REFUSES_UNTRUSTED = {"matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["untrusted"]}]}


def admitting(selector: Mapping[str, Any]) -> list[dict[str, Any]]:
    """FLEET, cluster a admitting namespaces by `selector`."""
    a, b = copy.deepcopy(FLEET)
    a["spec"]["allowedNamespaceSelector"] = dict(selector)
    return [a, b]


HOSTILE = [
    *(
        Hostile(f"a larger deployment whose selector {why} states no demand", [typo(cel)])
        for why, cel in [
            ("does not parse", "device.driver =="),
            ("calls an unknown function", 'nope(device.driver) == "x"'),
            ("is not a boolean", "device.driver"),
            ("nests past what Kubernetes allows", "[" * 400 + "]" * 400 + " == []"),
        ]
    ),
    Hostile("a deployment its own reconcile refuses for its name states nothing", [LONG_NAMED]),
    Hostile(
        "a tenant that cluster a refuses by namespace labels holds no room there",
        [deployment(name="big", namespace="team-c", gpus=8)],
        fleet=admitting(REFUSES_UNTRUSTED),
        labels={"team-c": {"tier": "untrusted"}},
    ),
    Hostile("demand that fits nowhere holds nothing", [UNPLACEABLE]),
    Hostile("a ModelDemand that is not one the schema allows is left out", raw=[raw_demand(replicas="many")]),
    Hostile(
        "a ModelDemand being deleted is left out",
        raw=[{**raw_demand(**ON_A), "metadata": {
            "name": "forged", "namespace": "team-x", "deletionTimestamp": "2026-01-01T00:00:00Z"}}],
    ),
    Hostile(
        "a ModelDemand larger than any the function writes is left out unread",
        raw=[raw_demand(clusters=["a", *(f"c{i:04d}-{'x' * 57}" for i in range(2047))], engines=[
            *ON_A["engines"],
            *({"name": f"e{i}", "options": [{"poolKind": f"{k:016x}", "nodes": 64, "groups": [{"pods": 1, "devices": 8}]
               * 64} for k in range(16)]} for i in range(7)),
        ])],
    ),
    Hostile(
        "a ModelDemand naming a cluster whose allowedNamespaces leaves its namespace out is not used there",
        raw=[raw_demand(**ON_A)],
        fleet=[{**FLEET[0], "spec": {**FLEET[0]["spec"], "allowedNamespaces": ["team-a", "team-b"]}}, FLEET[1]],
    ),
]  # fmt: skip


@pytest.mark.parametrize("ready_on_a", [False, True], ids=["placing", "with a Ready replica on a"])
@pytest.mark.parametrize("case", HOSTILE, ids=lambda c: c.name)
def test_another_tenants_objects_change_nothing(run_function: RunFunction, case: Hostile, ready_on_a: bool) -> None:
    running = [SMALL_ON_A] if ready_on_a else []
    observed = {key("a"): SMALL_ON_A} if ready_on_a else {}
    alone = victim(run_function, world(case.fleet, replicas=running, labels=case.labels), observed=observed)
    hostile = world(case.fleet, replicas=running, others=case.deployments, labels=case.labels)
    assert victim(run_function, [*hostile, *case.raw], observed=observed) == alone
    # and the victim went where it goes alone: cluster a (first by name)
    assert sorted(alone["desired"]["resources"]) == ["demand", key("a")]


SMALL_B = replica_name("small", "b", 0)
SMALL_A = replica_name("small", "a", 0)
# The fleet with the H100 node on b: a successor on a sorts before the replica it replaces.
H100_ON_B = [cluster("a", nodes=1, product="A100"), cluster("b", nodes=1)]
SMALL_ON_B = with_ready(replica("b", deployment="small", namespace="team-b", cel=ANY_GPU))
SUCCESSOR_ON_A = with_ready(replica("a", deployment="small", namespace="team-b", cel=ANY_GPU), "False")
WITHDRAWN = deployment(name="big", gpus=8, replicas=0)
# Eight Ready 8-GPU replicas of one tenant fill a's eight H100 nodes; another asks for 64 of them.
EIGHT_H100 = [cluster("a", nodes=8), cluster("b", nodes=16, product="A100")]
MOVER = deployment(name="mover", namespace="team-b", replicas=8, gpus=8, cel=ANY_GPU)
MOVER_ON_A = [
    with_ready(replica("a", i, deployment="mover", namespace="team-b", gpus=8, cel=ANY_GPU)) for i in range(8)
]
HUGE = deployment(name="huge", replicas=64, gpus=8)
MOVER_A0 = replica_name("mover", "a", 0)
MOVER_B0 = replica_name("mover", "b", 0)


@dataclass(frozen=True)
class Case:
    name: str
    xr: Mapping[str, Any]
    others: Sequence[Mapping[str, Any]] | None  # stated through their reconciles; None: requirement unanswered
    want_replicas: tuple[str, ...]  # composition keys of the desired ModelReplicas
    want_events: tuple[tuple[str, str], ...]  # (reason, message) of every Normal event
    want_scheduled: str  # the ReplicasScheduled message
    fleet: Sequence[Mapping[str, Any]] = field(default_factory=lambda: FLEET)
    replicas: Sequence[Mapping[str, Any]] = ()
    observed: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    labels: Mapping[str, Mapping[str, str]] | None = None  # Namespace labels, by namespace


CASES = [
    Case(
        "a small deployment leaves the only H100 node to the larger Hopper-only one",
        SMALL,
        [BIG],
        (key("b"),),
        (("ReplicasPlaced", f"Placed 1 new replica: {SMALL_B} on b."),),
        "Scheduled 1 of 1 replicas.",
    ),
    Case(
        "without the demands answered it schedules as if alone",
        SMALL,
        None,
        (key("a"),),
        (("ReplicasPlaced", f"Placed 1 new replica: {SMALL_A} on a."),),
        "Scheduled 1 of 1 replicas.",
    ),
    Case(
        "a tenant admitted only by its namespace labels gets room held",
        SMALL,
        [deployment(name="big", namespace="team-c", gpus=8)],
        (key("b"),),
        (("ReplicasPlaced", f"Placed 1 new replica: {SMALL_B} on b."),),
        "Scheduled 1 of 1 replicas.",
        fleet=admitting(ADMITS_GOLD_ONLY),
        labels={"team-c": {"tier": "gold"}, "team-b": {"tier": "gold"}},
    ),
    Case(
        "demand that fits nowhere does not switch held room off for the larger deployment behind it",
        SMALL,
        [UNPLACEABLE, BIG],
        (key("b"),),
        (("ReplicasPlaced", f"Placed 1 new replica: {SMALL_B} on b."),),
        "Scheduled 1 of 1 replicas.",
    ),
    Case(
        "held room leaves it unplaced; the condition counts, not names, another namespace's deployments",
        SMALL,
        [BIG],
        (),
        (),
        "Scheduled 0 of 1 replicas; 0/1 clusters are available for the rest: 1 had no pool with enough free "
        "nodes. Room is held first for the missing replicas of deployments ranked ahead (fleet quota guarantee, priority, GPUs per replica): "
        "1 replica of 1 deployment in other namespaces.",
        fleet=[cluster("a", nodes=1)],
    ),
    Case(
        "a deployment of its own namespace is named where room is held for it",
        deployment(name="small", cel=ANY_GPU),
        [BIG],
        (),
        (),
        "Scheduled 0 of 1 replicas; 0/1 clusters are available for the rest: 1 had no pool with enough free "
        "nodes. Room is held first for the missing replicas of deployments ranked ahead (fleet quota guarantee, priority, GPUs per replica): big (1).",
        fleet=[cluster("a", nodes=1)],
    ),
    Case(
        "a Ready replica on the only fit of blocked demand gets a successor, and stays until it is Ready",
        SMALL,
        [BIG],
        (key("a"), key("b")),
        (
            ("ReplicasPlaced", f"Placed 1 new replica: {SMALL_B} on b."),
            (
                "MakingRoom",
                f"Moving 1 replica to make room for unplaced demand of other deployments: {SMALL_A} off a/pool "
                "for a deployment of another namespace. Each leaves once its successor elsewhere is Ready.",
            ),
        ),
        "Scheduled 1 of 1 replicas.",
        replicas=[SMALL_ON_A],
        observed={key("a"): SMALL_ON_A},
    ),
    Case(
        "demand withdrawn before a successor is Ready: the successor goes, never the Ready replica",
        SMALL,
        [WITHDRAWN],
        (key("b"),),
        (("ReplicasRemoved", f"Removed 1 replica: {SMALL_A} from a (scaled down)."),),
        "Scheduled 1 of 1 replicas.",
        fleet=H100_ON_B,
        replicas=[SMALL_ON_B, SUCCESSOR_ON_A],
        observed={key("b"): SMALL_ON_B, key("a"): SUCCESSOR_ON_A},
    ),
    Case(
        "another tenant's huge demand moves one replica at a time, its successor within maxSurge 1",
        MOVER,
        [HUGE],
        (*(f"replica-a-{i}" for i in range(8)), key("b")),
        (
            ("ReplicasPlaced", f"Placed 1 new replica: {MOVER_B0} on b."),
            (
                "MakingRoom",
                f"Moving 1 replica to make room for unplaced demand of other deployments: {MOVER_A0} off a/pool "
                "for a deployment of another namespace. Each leaves once its successor elsewhere is Ready.",
            ),
        ),
        "Scheduled 8 of 8 replicas.",
        fleet=EIGHT_H100,
        replicas=MOVER_ON_A,
        observed={f"replica-a-{i}": r for i, r in enumerate(MOVER_ON_A)},
    ),
    Case(
        "the blocked deployment says a replica of another namespace moves for it, not whose",
        BIG,
        [SMALL],
        (),
        (
            (
                "WaitingForRoom",
                "Waiting for 1 replica of other deployments to move and make room: a replica of another namespace "
                "off a/pool.",
            ),
        ),
        "Scheduled 0 of 1 replicas; 0/2 clusters are available for the rest: 1 had no pool matching an engine's "
        "devices, 1 had no pool with enough free nodes.",
        replicas=[SMALL_ON_A],
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_fleet_demand(run_function: RunFunction, case: Case) -> None:
    objects = world(case.fleet, replicas=case.replicas, others=case.others or (), labels=case.labels)
    if case.others is None:  # a control plane that does not answer the demands requirement
        got = as_dict(
            run_function(
                request(
                    case.xr,
                    observed=case.observed,
                    required=resolved(clusters=case.fleet, replicas=case.replicas, ns=namespace("team-b")),
                )
            )
        )
    else:
        got = victim(run_function, objects, xr=case.xr, observed=case.observed)
    replicas = tuple(sorted(k for k in got["desired"].get("resources", {}) if k.startswith("replica-")))
    events = tuple((r["reason"], r["message"]) for r in got.get("results", []) if r["severity"] == "SEVERITY_NORMAL")
    (scheduled,) = (c["message"] for c in got["conditions"] if c["type"] == "ReplicasScheduled")
    assert (replicas, events, scheduled) == (case.want_replicas, case.want_events, case.want_scheduled)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_generated_bad_statements_never_fail_the_victim_nor_take_its_replica(
    run_function: RunFunction, data: Any
) -> None:
    """Whatever another namespace's ModelDemand says, the victim answers, and keeps its Ready replica."""
    valid = raw_demand(**ON_A)
    what, bad = data.draw(mutations(valid))
    got = victim(run_function, [*world(FLEET, replicas=[SMALL_ON_A]), bad], observed={key("a"): SMALL_ON_A})
    fatal = [r["message"] for r in got.get("results", []) if r["severity"] == "SEVERITY_FATAL"]
    assert (fatal, key("a") in got["desired"]["resources"], what) == ([], True, what)


def test_a_flapping_demand_never_takes_the_victim_below_its_ready_replicas_nor_past_its_surge(
    run_function: RunFunction,
) -> None:
    """Another tenant's demand for the victim's only H100 node appears and vanishes every reconcile.

    Whatever it does, the victim keeps a Ready replica at every step and never runs more than
    spec.replicas + maxSurge (1 + 1); what it creates starts not Ready and is Ready a reconcile later.
    """
    observed: dict[str, dict[str, Any]] = {key("a"): SMALL_ON_A}
    seen: list[tuple[str, ...]] = []
    for step in range(8):
        big = deployment(name="big", gpus=8, replicas=step % 2)  # wanted, withdrawn, wanted, ...
        objects = world(FLEET, replicas=list(observed.values()), others=[big])
        got = victim(run_function, objects, observed=observed)
        desired = {k: r["resource"] for k, r in got["desired"]["resources"].items() if k.startswith("replica-")}
        ready = [k for k in desired if k in observed and observed[k].get("status")]
        assert (step, len(ready) >= 1, len(desired) <= 2) == (step, True, True)
        observed = {k: with_ready(obj) if k in observed else obj for k, obj in desired.items()}
        seen.append(tuple(sorted(desired)))
    # it did move at some point: the demand was real while it lasted
    assert any(key("b") in keys for keys in seen)
