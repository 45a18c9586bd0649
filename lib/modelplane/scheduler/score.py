"""Rank feasible clusters: least packing penalty with spread weighed against it, then best fit, then name.

A cluster's cost is the packing penalty (packing.py, in devices) of the pools the replica would
take there, plus SPREAD devices per replica of this deployment the cluster already holds beyond
the least-loaded cluster: spread is a preference that gives way when spreading would idle or take
more than that. A deployment with `spread: Strict` spreads first, as a rule: fewest replicas,
then the penalty. Ties go to the cluster whose chosen pools keep the fewest free nodes after the
placement (best fit, which keeps roomy pools whole for gangs), then to the name.

The scores explain the choice: `spread` is 100 minus the extra replicas, `idle`, `premium`,
(on shared pools) `mixing` and (where other deployments' stated demand presses on the pools,
scarcity.py) `scarce` are the penalty's parts in devices (lower is better), `free` the free nodes left in the
chosen pools; `total` is 10,000 minus the weighed cost (the order itself is the raw key, so the
bounded total never reorders it). Because the winner is always the minimum of the raw key, bind
keeps the standings in a heap by that key and renders the full ranking once, for the diagnosis.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from modelplane.model import Cluster, SpreadPolicy
from modelplane.scheduler.filters import Context
from modelplane.scheduler.fit import take
from modelplane.scheduler.packing import Penalty
from modelplane.scheduler.result import ClusterScore

SCORE_SPREAD = "spread"
SCORE_IDLE = "idle"
SCORE_PREMIUM = "premium"
SCORE_FREE = "free"
SCORE_MIXING = "mixing"
SCORE_SCARCE = "scarce"
MAX_SCORE = 100
SPREAD = 8  # devices one more replica on an already used cluster is worth avoiding
_STRICT = 1000  # a Strict deployment's weight per extra replica in the displayed total
_TOTAL = 10_000


@dataclass(frozen=True, slots=True, kw_only=True)
class Standing:
    """The raw facts a feasible cluster is ranked on."""

    cluster: str
    replicas: int  # of this deployment, kept and placed so far
    penalty: Penalty  # of the pools the next replica would take here
    free: int  # free nodes left in those pools after it
    strict: bool

    def key(self) -> tuple[int, int, int, str]:
        if self.strict:
            return (self.replicas, self.penalty.total, self.free, self.cluster)
        return (self.penalty.total + SPREAD * self.replicas, 0, self.free, self.cluster)


def standing(ctx: Context, cluster: Cluster, replicas_on: Mapping[str, int]) -> Standing:
    options = ctx.assignment(cluster)
    if options is None:
        msg = f"cluster {cluster.name} is ranked without an assignment"
        raise AssertionError(msg)
    pools = ctx.ledger.pools(cluster.name)
    for o in options:
        take(o, pools)
    return Standing(
        cluster=cluster.name,
        replicas=replicas_on.get(cluster.name, 0),
        penalty=ctx.penalty(cluster, options),
        free=sum(pools[pool].free_nodes() for pool in {p for o in options for p, _ in o.pool_charges()}),
        strict=ctx.deployment.spread is SpreadPolicy.STRICT,
    )


def rank(standings: Sequence[Standing]) -> tuple[ClusterScore, ...]:
    """ClusterScores, best first."""
    if not standings:
        return ()
    fewest = min(s.replicas for s in standings)
    scores: list[ClusterScore] = []
    for s in sorted(standings, key=Standing.key):
        extra = s.replicas - fewest
        weight = _STRICT if s.strict else SPREAD
        scores.append(
            ClusterScore(
                cluster=s.cluster,
                total=max(_TOTAL - weight * extra - s.penalty.total, 0),
                scores=MappingProxyType(
                    {
                        SCORE_SPREAD: max(MAX_SCORE - extra, 0),
                        SCORE_IDLE: s.penalty.idle,
                        SCORE_PREMIUM: s.penalty.premium,
                        SCORE_FREE: max(s.free, 0),
                        # only where shared pools make it count
                        **({SCORE_MIXING: s.penalty.mixing} if s.penalty.mixing else {}),
                        # only where other deployments' stated demand presses on the pools
                        **({SCORE_SCARCE: s.penalty.scarce} if s.penalty.scarce else {}),
                    }
                ),
            )
        )
    return tuple(scores)
