"""Bind: place the shortfall one replica per round on the best-ranked feasible cluster.

Each round filters every cluster (ledger-independent verdicts are cached by the runner, capacity
verdicts by the context until the cluster is charged), ranks the feasible ones, takes the lowest
free index on the winner and charges the replica to the ledger before the next round. The first
round with no feasible cluster ends binding; its per-cluster statuses explain what is unplaced.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from modelplane.model import Cluster
from modelplane.scheduler.engines import EngineOption, cost_by_pool
from modelplane.scheduler.filters import Context, FilterRunner
from modelplane.scheduler.result import ClusterScore, Status
from modelplane.scheduler.score import rank


@dataclass(frozen=True, slots=True, kw_only=True)
class Placement:
    cluster: Cluster
    index: int
    options: tuple[EngineOption, ...]  # per engine, spec order


@dataclass(frozen=True, slots=True, kw_only=True)
class BindOutcome:
    placements: tuple[Placement, ...]
    statuses: Mapping[str, Status] = field(default_factory=lambda: MappingProxyType({}))  # of the failed round
    scores: tuple[ClusterScore, ...] = ()  # of the last round that placed a replica


def lowest_free_index(taken: set[int]) -> int:
    index = 0
    while index in taken:
        index += 1
    return index


def bind(
    ctx: Context,
    runner: FilterRunner,
    *,
    clusters: Sequence[Cluster],
    count: int,
    taken: Mapping[str, frozenset[int]],
    replicas_on: Mapping[str, int],
) -> BindOutcome:
    """Place up to `count` replicas; `taken` are indexes unavailable per cluster, `replicas_on` current spread."""
    used = {name: set(indexes) for name, indexes in taken.items()}
    spread = Counter(replicas_on)
    placements: list[Placement] = []
    scores: tuple[ClusterScore, ...] = ()
    by_name = {c.name: c for c in clusters}
    for _ in range(count):
        statuses = {c.name: runner.status(c) for c in clusters}
        feasible = [c for c in clusters if statuses[c.name].fits]
        if not feasible:
            return BindOutcome(placements=tuple(placements), statuses=MappingProxyType(statuses), scores=scores)
        scores = rank(ctx, feasible, spread)
        best = by_name[scores[0].cluster]
        options = ctx.assignment(best)
        if options is None:  # the capacity filter passed on this very assignment
            msg = f"cluster {best.name} passed the capacity filter without an assignment"
            raise AssertionError(msg)
        index = lowest_free_index(used.setdefault(best.name, set()))
        used[best.name].add(index)
        spread[best.name] += 1
        ctx.ledger.charge(best.name, cost_by_pool(options))
        placements.append(Placement(cluster=best, index=index, options=options))
    return BindOutcome(placements=tuple(placements), scores=scores)
