"""Rank feasible clusters: fewest replicas of this deployment (spread), then most free matching
nodes (fleet balance), then cluster name.

Each scorer gives 0-100 and the total is spread x 101 + balance, so any spread point outweighs
the whole balance range. Spread is 100 on the clusters holding the fewest replicas and drops one
point per extra replica, so the winner always comes from the least-loaded clusters, exactly as
the lexicographic rule says. Balance is free matching nodes relative to the roomiest feasible
cluster; where integer rounding makes two clusters tie, the ranking falls back to the raw counts
and then the name, so the order stays exact even where the bounded scores cannot tell.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from modelplane.model import Cluster
from modelplane.scheduler.filters import Context
from modelplane.scheduler.result import ClusterScore

SCORE_SPREAD = "spread"
SCORE_BALANCE = "balance"
MAX_SCORE = 100
_SPREAD_WEIGHT = MAX_SCORE + 1


@dataclass(frozen=True, slots=True, kw_only=True)
class _Raw:
    cluster: str
    replicas: int
    free: int


def rank(ctx: Context, feasible: Sequence[Cluster], replicas_on: Mapping[str, int]) -> tuple[ClusterScore, ...]:
    """ClusterScores of `feasible`, best first."""
    if not feasible:
        return ()
    raws = [
        _Raw(cluster=c.name, replicas=replicas_on.get(c.name, 0), free=ctx.free_matching_nodes(c)) for c in feasible
    ]
    fewest = min(r.replicas for r in raws)
    roomiest = max(r.free for r in raws)
    ranked: list[tuple[tuple[int, int, int, str], ClusterScore]] = []
    for r in raws:
        spread = max(MAX_SCORE - (r.replicas - fewest), 0)
        balance = MAX_SCORE * r.free // roomiest if roomiest > 0 else 0
        total = spread * _SPREAD_WEIGHT + balance
        score = ClusterScore(
            cluster=r.cluster,
            total=total,
            scores=MappingProxyType({SCORE_SPREAD: spread, SCORE_BALANCE: balance}),
        )
        ranked.append(((-total, r.replicas, -r.free, r.cluster), score))
    ranked.sort(key=lambda kv: kv[0])
    return tuple(score for _, score in ranked)
