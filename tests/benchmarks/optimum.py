"""Exact optima of a scenario: the most GPUs of whole replicas any placement can serve (HiGHS MIP).

Both models keep the project's rules: a replica on one cluster, each engine on one pool whose
devices match (the scheduler's own device matcher decides), at most the deployment's replicas.
They differ in capacity:

- whole nodes: a pool of N nodes holds pods of total node cost <= N (the scheduler's ledger);
- devices: pods share a node where its GPUs fit. Each pool's nodes are split into packing
  patterns (how many pods of each GPU size one node holds), and every pod needs a slot of its
  size. That is the hardware's limit; pods of one gang may land on one node in this model, which
  never matters for the generated shapes (their gang pods fill a node each).

The variable per (deployment, cluster, engine->pool assignment) is an integer count of replicas,
so the model stays small (a few hundred variables) and HiGHS proves it optimal in well under a
second; each solve is still bounded by `time_limit`, and a solve that hits it reports its gap.
"""

from __future__ import annotations

import itertools
import os
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import highspy
from modelplane.devices import DeviceMatcher
from modelplane.model import Cluster, Deployment, NodePool
from modelplane.scheduler.engines import EngineOption, EngineOptions

from tests.benchmarks.scenarios import Scenario, pool_gpus


@dataclass(frozen=True, slots=True, kw_only=True)
class Optimum:
    gpus: int  # of the best placement found
    gap: float  # relative gap to the proven bound (0.0 when proven optimal)


@dataclass(frozen=True, slots=True, kw_only=True)
class Config:
    """One replica of a deployment on one cluster with a chosen pool per engine."""

    demand: int  # index into the scenario's demand
    cluster: str
    nodes: dict[str, int]  # node cost per pool
    pods: dict[tuple[str, int], int]  # (pool, GPUs per pod) -> pods


def _pods(option: EngineOption, deployment: Deployment, engine: int) -> Iterator[tuple[int, int]]:
    """(GPUs per pod, pods) of every claiming member of an engine on its pool."""
    spec = deployment.engines[engine]
    for member, requests in zip(spec.members, option.requests, strict=True):
        if requests:
            yield sum(r.count for r in requests), member.pods_per_copy * spec.copies


def configs(scenario: Scenario) -> list[Config]:
    matcher = DeviceMatcher()
    out: list[Config] = []
    for i, demand in enumerate(scenario.demand):
        engines = EngineOptions(demand.deployment, matcher)
        for cluster in scenario.clusters:
            for combo in itertools.product(*engines.of(cluster)):
                nodes: dict[str, int] = {}
                pods: dict[tuple[str, int], int] = {}
                for e, option in enumerate(combo):
                    nodes[option.pool] = nodes.get(option.pool, 0) + option.cost
                    for size, n in _pods(option, demand.deployment, e):
                        pods[(option.pool, size)] = pods.get((option.pool, size), 0) + n
                out.append(Config(demand=i, cluster=cluster.name, nodes=nodes, pods=pods))
    return out


def _patterns(gpus: int, sizes: Sequence[int]) -> list[tuple[int, ...]]:
    """Every way to fill one node of `gpus` GPUs with pods of `sizes` (counts per size), none empty."""
    ranges = [range(gpus // s + 1) for s in sizes]
    return [
        counts
        for counts in itertools.product(*ranges)
        if any(counts) and sum(c * s for c, s in zip(counts, sizes, strict=True)) <= gpus
    ]


def solve(scenario: Scenario, *, devices: bool, time_limit: float = 20.0) -> Optimum:
    all_configs = configs(scenario)
    h = _highs()
    h.setOptionValue("time_limit", time_limit)
    h.setOptionValue("threads", 1)
    h.setOptionValue("mip_rel_gap", 0.0)
    demand = scenario.demand
    y = [h.addIntegral(lb=0, ub=demand[c.demand].replicas) for c in all_configs]
    for i, d in enumerate(demand):
        mine = [v for v, c in zip(y, all_configs, strict=True) if c.demand == i]
        if mine:  # a deployment that fits no cluster has no variable
            _at_most(h, [(v, 1) for v in mine], d.replicas)
    for cluster in scenario.clusters:
        for pool in cluster.pools:
            _capacity(h, list(zip(y, all_configs, strict=True)), cluster, pool, devices=devices)
    objective = sum((v * demand[c.demand].gpus_per_replica for v, c in zip(y, all_configs, strict=True)), start=0.0)
    h.maximize(objective)
    info = h.getInfo()
    value = round(info.objective_function_value)
    return Optimum(gpus=value, gap=max(info.mip_gap, 0.0) if value else 0.0)


def _highs() -> highspy.Highs:
    """A silent solver: HiGHS prints its banner on stdout from C++ as it is created."""
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        with Path(os.devnull).open("w") as devnull:
            os.dup2(devnull.fileno(), 1)
            h = highspy.Highs()
    finally:
        os.dup2(saved, 1)
        os.close(saved)
    h.silent()
    return h


def _at_most(h: highspy.Highs, terms: Sequence[tuple[highspy.highs.highs_var, int]], bound: int) -> None:
    """sum(coefficient x variable) <= bound."""
    h.addRow(-highspy.kHighsInf, bound, len(terms), [v.index for v, _ in terms], [float(c) for _, c in terms])


def _capacity(
    h: highspy.Highs,
    variables: list[tuple[highspy.highs.highs_var, Config]],
    cluster: Cluster,
    pool: NodePool,
    *,
    devices: bool,
) -> None:
    here = [(v, c) for v, c in variables if c.cluster == cluster.name]
    if not devices:
        used = [(v, c.nodes[pool.name]) for v, c in here if c.nodes.get(pool.name)]
        if used:
            _at_most(h, used, pool.nodes)
        return
    sizes = sorted({size for _, c in here for (p, size) in c.pods if p == pool.name})
    if not sizes:
        return
    patterns = _patterns(pool_gpus(pool), sizes)
    n = [h.addIntegral(lb=0, ub=pool.nodes) for _ in patterns]
    _at_most(h, [(v, 1) for v in n], pool.nodes)
    for k, size in enumerate(sizes):
        # pods of this size placed - slots of this size on the pool's nodes <= 0
        need = [(v, c.pods[(pool.name, size)]) for v, c in here if (pool.name, size) in c.pods]
        slots = [(v, -pattern[k]) for v, pattern in zip(n, patterns, strict=True) if pattern[k]]
        _at_most(h, need + slots, 0)
