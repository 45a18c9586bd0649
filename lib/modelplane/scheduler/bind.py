"""Bind: place the shortfall one replica per round on the best-ranked feasible cluster.

Each round takes the best-ranked feasible cluster, the lowest free index on it, and charges the
replica to the ledger before the next round. Clusters are filtered once; after a placement only
the chosen cluster is filtered and ranked again, since nothing else changed. The first
round with no feasible cluster ends binding; its per-cluster statuses explain what is unplaced.
When everything is placed, the statuses of the last round are kept instead, so a caller can still
show why some clusters were passed over. Kept statuses of rejected clusters carry every failing
filter (FilterRunner.failures), not only the first.
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from modelplane.model import Cluster
from modelplane.scheduler.engines import EngineOption, cost_by_pool
from modelplane.scheduler.filters import Context, FilterRunner
from modelplane.scheduler.result import ClusterScore, Status
from modelplane.scheduler.score import Standing, rank, standing


@dataclass(frozen=True, slots=True, kw_only=True)
class Placement:
    cluster: Cluster
    index: int
    options: tuple[EngineOption, ...]  # per engine, spec order


@dataclass(frozen=True, slots=True, kw_only=True)
class BindOutcome:
    placements: tuple[Placement, ...]
    # of the failed round, or of the last round when every replica was placed
    statuses: Mapping[str, Status] = field(default_factory=lambda: MappingProxyType({}))
    scores: tuple[ClusterScore, ...] = ()  # of the last round that placed a replica
    evaluated: bool = True  # False when there was nothing to place, so no cluster was filtered


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
    explain: bool = True,
) -> BindOutcome:
    """Place up to `count` replicas; `taken` are indexes unavailable per cluster, `replicas_on` current spread.

    `explain=False` keeps only each rejected cluster's first failure (play-outs of other
    deployments' demand show no diagnosis) and no scores.
    """
    if count <= 0:  # steady state: no round runs, so no verdict would be kept; filter nothing
        return BindOutcome(placements=(), evaluated=False)
    used = {name: set(indexes) for name, indexes in taken.items()}
    spread = Counter(replicas_on)
    placements: list[Placement] = []
    last_round: list[Standing] = []
    by_name = {c.name: c for c in clusters}
    # Placing on a cluster changes only that cluster's capacity and spread: every other verdict and
    # standing carries over to the next round. So the standings also sit in a heap by their key
    # (the winner is its top): each round pops the winner and pushes back its new standing.
    if ctx.packing is not None:  # before any assignment: device sizes order the pools
        ctx.packing.rank_sizes(c for c in clusters if runner.eligible(c))
    statuses = {c.name: runner.status(c) for c in clusters}
    standings = {c.name: standing(ctx, c, spread) for c in clusters if statuses[c.name].fits}
    heap: list[tuple[int, int, int, str]] = [s.key() for s in standings.values()]
    heapq.heapify(heap)
    last_statuses: Mapping[str, Status] = MappingProxyType({})
    for round_number in range(count):
        if not standings:
            if not explain:
                return BindOutcome(placements=tuple(placements), statuses=MappingProxyType(statuses))
            return BindOutcome(
                placements=tuple(placements),
                statuses=_explained(runner, by_name, statuses),
                scores=rank(last_round),
            )
        last_round = list(standings.values())
        if round_number == count - 1 and explain:
            last_statuses = _explained(runner, by_name, statuses)
        chosen = by_name[heapq.heappop(heap)[-1]]
        options = ctx.assignment(chosen)
        if options is None:  # the capacity filter passed on this very assignment
            msg = f"cluster {chosen.name} passed the capacity filter without an assignment"
            raise AssertionError(msg)
        index = lowest_free_index(used.setdefault(chosen.name, set()))
        used[chosen.name].add(index)
        spread[chosen.name] += 1
        ctx.ledger.charge(chosen.name, cost_by_pool(options))
        placements.append(Placement(cluster=chosen, index=index, options=options))
        generation = ctx.quota.generation if ctx.quota is not None else 0
        if ctx.quota is not None:
            ctx.quota.charge(chosen, cost_by_pool(options))
        if ctx.quota is not None and ctx.quota.generation != generation:
            # The team's quota moved: what it may place changed on every cluster, not only this one.
            statuses = {c.name: runner.status(c) for c in clusters}
            standings = {c.name: standing(ctx, c, spread) for c in clusters if statuses[c.name].fits}
            heap = [entry.key() for entry in standings.values()]
            heapq.heapify(heap)
            continue
        statuses[chosen.name] = runner.status(chosen)
        if statuses[chosen.name].fits:
            standings[chosen.name] = standing(ctx, chosen, spread)
            heapq.heappush(heap, standings[chosen.name].key())
        else:
            del standings[chosen.name]
    return BindOutcome(placements=tuple(placements), statuses=last_statuses, scores=rank(last_round) if explain else ())


def _explained(
    runner: FilterRunner, by_name: Mapping[str, Cluster], statuses: Mapping[str, Status]
) -> Mapping[str, Status]:
    """The statuses with every failing filter of each rejected cluster."""
    return MappingProxyType({name: s if s.fits else runner.failures(by_name[name]) for name, s in statuses.items()})
