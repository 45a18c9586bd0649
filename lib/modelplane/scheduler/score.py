"""Rank feasible clusters: fewest replicas of this deployment (spread), then most free matching
nodes (fleet balance), then cluster name.

Each scorer gives 0-100 and the total is spread x 101 + balance, so any spread point outweighs
the whole balance range. Spread is 100 on the clusters holding the fewest replicas and drops one
point per extra replica, so the winner always comes from the least-loaded clusters, exactly as
the lexicographic rule says. Balance is free matching nodes relative to the roomiest feasible
cluster; where integer rounding makes two clusters tie, the ranking falls back to the raw counts
and then the name, so the order stays exact even where the bounded scores cannot tell.

Because the winner of rank() is always the minimum of the raw key, bind keeps the standings in a
heap by that key (O(log clusters) per round) and renders the full ranking only once, for the
diagnosis.
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
class Standing:
    """The raw facts a feasible cluster is ranked on."""

    cluster: str
    replicas: int  # of this deployment, kept and placed so far
    free: int  # free nodes in the pools that can host some engine

    def key(self) -> tuple[int, int, str]:
        """The lexicographic rule itself: fewest replicas, most free nodes, name."""
        return (self.replicas, -self.free, self.cluster)


def standing(ctx: Context, cluster: Cluster, replicas_on: Mapping[str, int]) -> Standing:
    return Standing(
        cluster=cluster.name, replicas=replicas_on.get(cluster.name, 0), free=ctx.free_matching_nodes(cluster)
    )


def rank(standings: Sequence[Standing]) -> tuple[ClusterScore, ...]:
    """ClusterScores, best first."""
    if not standings:
        return ()
    fewest = min(s.replicas for s in standings)
    roomiest = max(s.free for s in standings)
    ranked: list[tuple[tuple[int, int, int, str], ClusterScore]] = []
    for s in standings:
        spread = max(MAX_SCORE - (s.replicas - fewest), 0)
        balance = MAX_SCORE * s.free // roomiest if roomiest > 0 else 0
        total = spread * _SPREAD_WEIGHT + balance
        score = ClusterScore(
            cluster=s.cluster,
            total=total,
            scores=MappingProxyType({SCORE_SPREAD: spread, SCORE_BALANCE: balance}),
        )
        ranked.append(((-total, *s.key()), score))
    ranked.sort(key=lambda kv: kv[0])
    return tuple(score for _, score in ranked)
