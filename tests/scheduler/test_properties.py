"""Properties over random fleets: never overcommit, never split, keep what is kept, ignore input order.

A fleet state is built the way it arises in production: each deployment is scheduled in turn
against what the others already hold. Then one deployment and the fleet change (replicas,
copies, a cluster deleted, drained or not Ready) and that deployment is rescheduled.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace

from hypothesis import given, settings
from hypothesis import strategies as st
from modelplane.model import Cluster, Deployment, Engine, ModelReplica, Role, TaintEffect
from modelplane.scheduler import ScheduleResult, schedule
from modelplane.scheduler.packing import Penalty
from modelplane.scheduler.score import Standing, rank

from tests.scheduler.factories import cluster, deployment, engine, is_model, member, pool, request, taint, toleration

MODELS = ("H100", "H200")


@st.composite
def engines(draw: st.DrawFn, name: str) -> Engine:
    copies = draw(st.integers(1, 2))
    model = draw(st.sampled_from((None, *MODELS)))
    req = [request(selectors=[is_model(model)])] if model else [request()]
    workers = draw(st.integers(0, 2))
    if workers == 0:
        return engine(name, copies=copies, members=[member(requests=req)])
    leader = member(role=Role.LEADER, requests=req if draw(st.booleans()) else ())
    return engine(name, copies=copies, members=[leader, member(role=Role.WORKER, worker_nodes=workers, requests=req)])


@st.composite
def deployments(draw: st.DrawFn, name: str) -> Deployment:
    count = draw(st.integers(1, 2))
    return deployment(
        name,
        namespace=draw(st.sampled_from(("ns1", "ns2"))),
        replicas=draw(st.integers(0, 4)),
        engines=[draw(engines(f"e{i}")) for i in range(count)],
        tolerations=[toleration("drain", operator="Exists")] if draw(st.booleans()) else [],
    )


@st.composite
def clusters(draw: st.DrawFn, name: str) -> Cluster:
    pools = [
        pool(f"p{j}", nodes=draw(st.integers(0, 6)), model=draw(st.sampled_from(MODELS)))
        for j in range(draw(st.integers(1, 3)))
    ]
    return cluster(name, pools=pools)


@dataclass(frozen=True)
class Scenario:
    fleet: tuple[Cluster, ...]
    observed: tuple[ModelReplica, ...]
    target: Deployment


def _own(r: ModelReplica, d: Deployment) -> bool:
    return r.namespace == d.namespace and r.deployment == d.name


@st.composite
def scenarios(draw: st.DrawFn) -> Scenario:
    fleet = [draw(clusters(f"c{i}")) for i in range(draw(st.integers(1, 4)))]
    deps = [draw(deployments(f"d{i}")) for i in range(draw(st.integers(1, 3)))]
    state: list[ModelReplica] = []
    for d in deps:
        result = schedule(d, fleet, state)
        state = [r for r in state if not _own(r, d)] + list(result.replicas)
    target = deps[draw(st.integers(0, len(deps) - 1))]
    grown = tuple(replace(e, copies=e.copies + draw(st.integers(0, 1))) for e in target.engines)
    target = replace(target, replicas=draw(st.integers(0, 5)), engines=grown)
    changed: list[Cluster] = []
    for c in fleet:
        change = draw(st.sampled_from(("keep", "keep", "delete", "not-ready", "drain")))
        if change == "not-ready":
            changed.append(replace(c, ready=False))
        elif change == "drain":
            changed.append(replace(c, taints=(taint("drain", effect=TaintEffect.NO_EXECUTE),)))
        elif change == "keep":
            changed.append(c)
    return Scenario(fleet=tuple(changed), observed=tuple(state), target=target)


def _engine_pools(r: ModelReplica) -> tuple[tuple[str, frozenset[str]], ...]:
    return tuple((e.name, frozenset(m.pool for m in e.members)) for e in r.engines)


def _usage(replicas: Sequence[ModelReplica]) -> Counter[tuple[str, str]]:
    used: Counter[tuple[str, str]] = Counter()
    for r in replicas:
        for p, n in r.node_cost_by_pool().items():
            used[r.cluster, p] += n
    return used


def _check(s: Scenario, result: ScheduleResult) -> None:
    by_cluster = {c.name: c for c in s.fleet}
    others = [r for r in s.observed if not _own(r, s.target) and r.cluster in by_cluster]
    used = _usage([*others, *result.replicas])
    for c in s.fleet:
        for p in c.pools:
            assert used[c.name, p.name] <= p.nodes, f"pool {c.name}/{p.name} overcommitted"
    for r in result.replicas:
        pools = {p.name for p in by_cluster[r.cluster].pools}
        for name, engine_pools in _engine_pools(r):
            assert len(engine_pools) == 1, f"engine {name} of {r.name} split across {engine_pools}"
            assert engine_pools <= pools, f"{r.name} uses a pool outside its cluster {r.cluster}"
    assert len({(r.cluster, r.index) for r in result.replicas}) == len(result.replicas)
    assert len(result.replicas) <= s.target.replicas
    own = {r.name: r for r in s.observed if _own(r, s.target)}
    removed = Counter(r.name for r in result.removed)
    for r in result.replicas:
        if r.name in result.created:
            assert r.name not in own
            assert not r.ready
        else:
            before = own[r.name]
            assert (r.cluster, r.index, _engine_pools(r)) == (before.cluster, before.index, _engine_pools(before))
    kept = {r.name for r in result.replicas} - result.created
    assert sorted([*kept, *removed.elements()]) == sorted(own), "every observed replica is kept or removed once"
    assert not (result.created & set(removed))


@settings(max_examples=200, deadline=None)
@given(scenarios(), st.randoms(use_true_random=False))
def test_random_fleets(s: Scenario, rnd: random.Random) -> None:
    result = schedule(s.target, s.fleet, s.observed)
    _check(s, result)
    fleet = [replace(c, pools=tuple(rnd.sample(c.pools, len(c.pools)))) for c in rnd.sample(s.fleet, len(s.fleet))]
    shuffled = schedule(s.target, fleet, rnd.sample(s.observed, len(s.observed)))
    assert repr(shuffled) == repr(result)


@settings(max_examples=300, deadline=None)
@given(
    st.booleans(),
    st.lists(
        st.tuples(
            st.text("abc", min_size=1, max_size=3),
            st.integers(0, 150),
            st.builds(Penalty, idle=st.integers(0, 499), premium=st.integers(0, 499)),
            st.integers(0, 2000),
        ),
        min_size=1,
        max_size=12,
        unique_by=lambda t: t[0],
    ),
)
def test_bounded_scores_agree_with_the_ranking_rule(strict: bool, facts: list[tuple[str, int, Penalty, int]]) -> None:
    standings = [Standing(cluster=c, replicas=r, penalty=p, free=f, strict=strict) for c, r, p, f in facts]
    ranked = rank(standings)
    assert [s.cluster for s in ranked] == [s.cluster for s in sorted(standings, key=Standing.key)]
    for score in ranked:
        assert 0 <= score.scores["spread"] <= 100
    totals = [s.total for s in ranked]
    assert totals == sorted(totals, reverse=True)
