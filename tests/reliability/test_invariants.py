"""Invariants of the function's decisions over random fleets (hypothesis, through the servicer).

Fleets come from tests.benchmarks.fleet (other deployments' replicas already charged); a deployment
of a random shape is placed at one size, then resized. Each answer must: never overcommit a pool
across every deployment, keep each engine on one pool and each replica on one existing cluster,
leave retained replicas unchanged, remove no more than the scale-down asks (paced by the disruption
budget over reconciles), change nothing once its own output fed back settles, and not depend on the
order of required resources.
"""

import random
from collections import Counter
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from modelplane import api

from tests.benchmarks import fleet
from tests.benchmarks.shapes import Shape, deployment
from tests.function.conftest import as_dict

from .conftest import RunFunction
from .scenarios import Scenario, desired, observed_as_ready


def charged(clusters: list[dict[str, Any]], replicas: list[dict[str, Any]]) -> dict[tuple[str, str], tuple[int, int]]:
    """(nodes used, nodes published) per (cluster, pool)."""
    used: Counter[tuple[str, str]] = Counter()
    for obj in replicas:
        r = api.parse_replica(obj)
        for pool, n in r.node_cost_by_pool().items():
            used[(r.cluster, pool)] += n
    published = {(c.name, p.name): p.nodes for c in map(api.parse_cluster, clusters) for p in c.pools}
    return {k: (used[k], published.get(k, 0)) for k in used}


def one_pool_per_engine(obj: dict[str, Any]) -> bool:
    return all(len({m["nodePoolName"] for m in e["members"]}) == 1 for e in obj["spec"]["engines"])


@settings(max_examples=100, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    clusters=st.integers(1, 6),
    pools=st.integers(1, 4),
    existing=st.integers(0, 8),
    shape=st.sampled_from(list(Shape)),
    first=st.integers(0, 6),
    second=st.integers(0, 6),
)
def test_function_decisions_hold_every_invariant(
    servicer: RunFunction, *, seed: int, clusters: int, pools: int, existing: int, shape: Shape, first: int, second: int
) -> None:
    try:
        f = fleet.generate(clusters=clusters, pools=pools, existing=existing, seed=seed)
    except ValueError:
        return  # the seeded fleet cannot hold that many existing replicas
    others = list(f.replicas)
    s = Scenario(
        xr=deployment(shape, replicas=first), clusters=list(f.clusters), replicas=others, namespace=f.namespace
    )
    before = observed_as_ready(desired(servicer(s.request())))

    s = Scenario(
        xr=deployment(shape, replicas=second),
        observed=before,
        clusters=list(f.clusters),
        replicas=[*others, *before.values()],
        namespace=f.namespace,
    )
    rsp = servicer(s.request())
    after = desired(rsp)
    names = {c["metadata"]["name"]: {p["name"] for p in c["spec"]["nodePools"]} for c in f.clusters}

    over = {k: v for k, v in charged(list(f.clusters), [*others, *after.values()]).items() if v[0] > v[1]}
    split = [k for k, obj in after.items() if not one_pool_per_engine(obj)]
    strays = [
        k
        for k, obj in after.items()
        if any(
            m["nodePoolName"] not in names.get(obj["spec"]["clusterName"], set())
            for e in obj["spec"]["engines"]
            for m in e["members"]
        )
    ]
    kept = [k for k in before if k in after]
    changed = [k for k in kept if after[k]["spec"] != {**before[k]["spec"]}]
    removed = len(before) - len(kept)
    assert (over, split, strays, changed) == ({}, [], [], [])
    assert removed <= max(0, len(before) - second)

    # The budget paces a scale-down over reconciles: fed back, the answers settle within one round per
    # replica removed, never removing more than asked, and a settled answer is answered with itself.
    def fed_back(objs: dict[str, Any]) -> Any:
        ready = observed_as_ready(objs)
        return Scenario(
            xr=s.xr, observed=ready, clusters=s.clusters, replicas=[*others, *ready.values()], namespace=s.namespace
        ).request()

    settled = after
    for _ in range(len(before) + 1):
        nxt = desired(servicer(fed_back(settled)))
        if nxt == settled:
            break
        assert set(nxt) <= set(settled)
        settled = nxt
    kept_in_the_end = len([k for k in before if k in settled])
    assert (desired(servicer(fed_back(settled))) == settled, kept_in_the_end >= min(len(before), second)) == (
        True,
        True,
    )

    # Determinism: shuffled required resources give the same response.
    rng = random.Random(seed)
    shuffled = Scenario(
        xr=s.xr,
        observed=s.observed,
        clusters=rng.sample(s.clusters, len(s.clusters)),
        replicas=rng.sample(s.replicas, len(s.replicas)),
        namespace=s.namespace,
    )
    assert as_dict(servicer(shuffled.request())) == as_dict(rsp)
