"""Fabric-aware gangs: an engine's members may span the pools of one interconnect fabric, never pools without one."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from modelplane.devices import DeviceMatcher
from modelplane.model import Cluster, Deployment, Fabric, ModelReplica, PoolPacking, Role
from modelplane.scheduler import schedule
from modelplane.scheduler.engines import EngineOptions
from modelplane.scheduler.filters import Context
from modelplane.scheduler.ledger import Ledger
from modelplane.scheduler.packing import OPENING, Packing, Penalty

from tests.scheduler.factories import (
    cluster,
    deployment,
    engine,
    is_model,
    leader_worker,
    member,
    observed,
    pool,
    request,
)

GANG = deployment("gang", engines=[leader_worker(workers=1)])  # a Leader and a Worker of 8 GPUs each
# a Leader on any GPU, its Worker only on H200s
MIXED = deployment(
    "mixed",
    engines=[
        engine(
            members=[
                member(role=Role.LEADER, requests=[request(count=1)]),
                member(role=Role.WORKER, worker_nodes=2, requests=[request(selectors=[is_model("H200")])]),
            ]
        )
    ],
)


def fabric(name: str, *pools: str, level: str | None = None) -> Fabric:
    return Fabric(name=name, pools=tuple(sorted(pools)), topology_level=level)


def with_fabrics(c: Cluster, *fabrics: Fabric, topology: str | None = None) -> Cluster:
    return replace(c, fabrics=tuple(fabrics), topology=topology)


def where(replica: ModelReplica) -> str:
    """cluster/index, then per engine its members' pools by role and its fabric level."""
    engines = " ".join(
        f"{e.name}:"
        + ",".join(f"{m.role.value}@{m.pool}" for m in e.members)
        + (f"^{e.fabric_level}" if e.fabric_level else "")
        for e in replica.engines
    )
    return f"{replica.cluster}/{replica.index} {engines}"


@dataclass(frozen=True, kw_only=True)
class Case:
    name: str
    deployment: Deployment
    clusters: Sequence[Cluster]
    observed: Sequence[ModelReplica] = ()
    want: tuple[str, ...]
    message: str
    removed: tuple[str, ...] = ()


ONE_NODE = [pool("a", nodes=1), pool("b", nodes=1)]
NOT_PLACED = "Scheduled 0 of 1 replicas; 0/1 clusters are available for the rest: 1 had no pool with enough free nodes."
CASES = [
    Case(
        name="a gang no single pool holds spans two pools of one fabric",
        deployment=GANG,
        clusters=[with_fabrics(cluster("c", pools=ONE_NODE), fabric("ib", "a", "b"))],
        want=("c/0 main:Leader@a,Worker@b",),
        message="Scheduled 1 of 1 replicas.",
    ),
    Case(
        name="without a shared fabric the same gang is not split across the pools",
        deployment=GANG,
        clusters=[cluster("c", pools=ONE_NODE)],
        want=(),
        message=NOT_PLACED,
    ),
    Case(
        name="pools on different fabrics never host one engine",
        deployment=GANG,
        clusters=[
            with_fabrics(
                cluster("c", pools=[*ONE_NODE, pool("x", nodes=1, model="A100"), pool("y", nodes=1, model="A100")]),
                fabric("ib-1", "a", "x"),
                fabric("ib-2", "b", "y"),
            )
        ],
        want=("c/0 main:Leader@a,Worker@x",),
        message="Scheduled 1 of 1 replicas.",
    ),
    Case(
        name="a gang that fits one pool of a fabric stays on it",
        deployment=GANG,
        clusters=[with_fabrics(cluster("c", pools=[pool("a", nodes=2), pool("b", nodes=2)]), fabric("ib", "a", "b"))],
        want=("c/0 main:Leader@a,Worker@a",),
        message="Scheduled 1 of 1 replicas.",
    ),
    Case(
        name="members matching different pools of a fabric take each their own, with the fabric's topology level",
        deployment=MIXED,
        clusters=[
            with_fabrics(
                cluster("c", pools=[pool("l4", nodes=1, model="L4"), pool("h200", nodes=2, model="H200")]),
                fabric("ib", "l4", "h200", level="example.com/ib-domain"),
                topology="fabric",
            )
        ],
        want=("c/0 main:Leader@l4,Worker@h200^example.com/ib-domain",),
        message="Scheduled 1 of 1 replicas.",
    ),
    Case(
        name="without a KAI topology a spanning engine names no level",
        deployment=MIXED,
        clusters=[
            with_fabrics(
                cluster("c", pools=[pool("l4", nodes=1, model="L4"), pool("h200", nodes=2, model="H200")]),
                fabric("ib", "l4", "h200", level="example.com/ib-domain"),
            )
        ],
        want=("c/0 main:Leader@l4,Worker@h200",),
        message="Scheduled 1 of 1 replicas.",
    ),
    Case(
        name="a replica spanning pools of a fabric is kept there",
        deployment=GANG,
        clusters=[with_fabrics(cluster("c", pools=ONE_NODE), fabric("ib", "a", "b"))],
        observed=[observed(GANG, cluster="c", index=0, pools="a")],
        want=("c/0 main:Leader@a,Worker@b",),
        message="Scheduled 1 of 1 replicas.",
    ),
    Case(
        name="a replica spanning pools that no longer share a fabric leaves, and nothing else fits",
        deployment=GANG,
        clusters=[cluster("c", pools=ONE_NODE)],
        observed=[observed(GANG, cluster="c", index=0, pools="a")],
        want=(),
        message=NOT_PLACED,
        removed=("c/0: engine split across pools",),
    ),
]


def _spanning(r: ModelReplica) -> ModelReplica:
    """The observed gang with its Worker moved to pool b."""
    (e,) = r.engines
    members = tuple(replace(m, pool="b") if m.role is Role.WORKER else m for m in e.members)
    return replace(r, engines=(replace(e, members=members),))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_fabric_placement(case: Case) -> None:
    seen = [_spanning(r) for r in case.observed]
    result = schedule(case.deployment, case.clusters, seen)
    got = (
        tuple(where(r) for r in result.replicas),
        result.diagnosis.message(),
        tuple(f"{r.cluster}/{r.index}: {r.reason}" for r in result.removed),
    )
    assert got == (case.want, case.message, case.removed)


def test_the_ledger_charges_a_spanning_replica_on_each_of_its_pools() -> None:
    c = with_fabrics(cluster("c", pools=[pool("a", nodes=2), pool("b", nodes=3)]), fabric("ib", "a", "b"))
    ledger = Ledger([c])
    ledger.charge_replica(
        _spanning(observed(deployment("g", engines=[leader_worker(workers=2)]), cluster="c", index=0, pools="a"))
    )
    assert dict(ledger.free("c")) == {"a": 1, "b": 1}


# --- property: a gang is never split across pools that share no fabric, and no pool is overfilled ---------


@st.composite
def fleets(draw: st.DrawFn) -> list[Cluster]:
    out: list[Cluster] = []
    for i in range(draw(st.integers(1, 3))):
        names = [f"p{j}" for j in range(draw(st.integers(2, 4)))]
        pools = [
            replace(
                pool(n, nodes=draw(st.integers(0, 3)), model=draw(st.sampled_from(("H100", "H200")))),
                packing=draw(st.sampled_from(PoolPacking)),
            )
            for n in names
        ]
        shuffled = draw(st.permutations(names))
        cut = draw(st.integers(0, len(names)))
        fabrics = [fabric(f"f{k}", *part) for k, part in enumerate((shuffled[:cut], shuffled[cut:])) if len(part) >= 2]
        out.append(with_fabrics(cluster(f"c{i}", pools=pools), *fabrics))
    return out


@st.composite
def gangs(draw: st.DrawFn, name: str) -> Deployment:
    leader = draw(st.sampled_from(("H100", "H200", None)))
    selectors = [is_model(leader)] if leader else []
    per_pod = draw(st.sampled_from((1, 4, 8)))
    return deployment(
        name,
        replicas=draw(st.integers(1, 3)),
        exclusive_nodes=draw(st.booleans()),
        engines=[
            engine(
                copies=draw(st.integers(1, 2)),
                members=[
                    member(role=Role.LEADER, requests=[request(count=per_pod, selectors=["true", *selectors])]),
                    member(role=Role.WORKER, worker_nodes=draw(st.integers(1, 3)), requests=[request(count=per_pod)]),
                ],
            )
        ],
    )


@settings(max_examples=100, deadline=None)
@given(fleets(), st.integers(0, 3).flatmap(lambda n: st.tuples(*(gangs(f"d{i}") for i in range(n + 1)))), st.randoms())
def test_a_gang_never_spans_pools_without_a_shared_fabric_nor_overfills_one(
    clusters: list[Cluster], deps, rnd: random.Random
) -> None:
    by_name = {c.name: c for c in clusters}
    fleet: list[ModelReplica] = []
    for dep in rnd.sample(list(deps), len(deps)):
        fleet += [r for r in schedule(dep, clusters, fleet).replicas if r.deployment == dep.name]
    for r in fleet:
        for e in r.engines:
            pools = frozenset(m.pool for m in e.members)
            assert len(pools) == 1 or by_name[r.cluster].fabric_of(pools) is not None, where(r)
    ledger = Ledger(clusters)
    for r in fleet:
        ledger.charge_replica(r)
    assert all(ledger.holds(c.name) for c in clusters)


def test_pools_of_a_fabric_are_found_together_only() -> None:
    c = with_fabrics(cluster("c", pools=[pool(n) for n in "abcd"]), fabric("f1", "a", "b"), fabric("f2", "c", "d"))
    got = [c.fabric_of(frozenset(p)) for p in ("ab", "cd", "ac", "a")]
    assert got == [fabric("f1", "a", "b"), fabric("f2", "c", "d"), None, fabric("f1", "a", "b")]


@dataclass(frozen=True)
class PenaltyCase:
    name: str
    packing: PoolPacking  # of pool b, where the Worker goes; pool a, the Leader's, counts whole nodes
    want: Penalty


PENALTIES = [
    PenaltyCase("a spanning gang pays for opening the empty shared pool its Worker takes", PoolPacking.DEVICES,
                Penalty(mixing=OPENING * 8)),
    PenaltyCase("on pools of whole nodes it pays nothing for mixing", PoolPacking.NODES, Penalty()),
]  # fmt: skip


@pytest.mark.parametrize("case", PENALTIES, ids=lambda c: c.name)
def test_a_spanning_option_is_charged_the_mixing_of_every_pool_it_takes(case: PenaltyCase) -> None:
    c = with_fabrics(
        cluster("c", pools=[pool("a", nodes=1), replace(pool("b", nodes=1), packing=case.packing)]),
        fabric("ib", "a", "b"),
    )
    engines = EngineOptions(GANG, DeviceMatcher())
    packing = Packing(engines)
    packing.rank_sizes([c])
    ctx = Context(GANG, engines, Ledger([c]), packing=packing)
    (option,) = (o for o in engines.of(c)[0] if o.member_pools == ("a", "b"))
    assert ctx.penalty(c, (option,)) == case.want
