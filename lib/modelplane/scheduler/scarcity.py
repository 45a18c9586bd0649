"""How much of the fleet's other demand a pool is the best or only fit for: its scarcity, per pool kind.

The packing penalty (packing.py) ranks pools by what they are (idle devices, device size), not by
who else needs them: an H100 and an A100-80GB pool score the same to a one-GPU model, so it may
take the only Hopper nodes a Hopper-only TP8 deployment needs. Scarcity reads the other
deployments' statements (modelplane.stated): each engine of each one spreads the nodes it wants
over the nodes of every pool kind it can use, so a pool kind few deployments can avoid (the only
fit of picky demand) gathers the most pressure, and one that flexible demand shares with many
others gathers little. A replica then pays, per node it takes, for the pressure on that kind:
among the pools that fit it, flexible demand goes where fewer others could go.

Only statements are read (another tenant's spec is never evaluated), and the sum is over pool
kinds, not pools: one pass over the statements and the fleet's pools per call, whatever the
fleet holds. Clusters a statement cannot use are left out of its capacity, so demand confined to
a few clusters presses on their pools' kinds the harder.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from modelplane.model import Cluster
from modelplane.stated import StatedDemand, pool_kind

SCARCE = 4  # per device of the nodes taken, per unit of pressure (nodes wanted per node usable)


class Scarcity:
    """Pressure per pool kind from other deployments' statements, and what taking a pool of it costs."""

    def __init__(self, clusters: Sequence[Cluster], demands: Sequence[StatedDemand], *, me: tuple[str, str]) -> None:
        nodes: dict[str, dict[str, int]] = {}  # cluster -> kind -> nodes
        self._kinds: dict[tuple[str, str], str] = {}  # (cluster, pool) -> kind
        total: Counter[str] = Counter()
        for c in clusters:
            here = nodes.setdefault(c.name, {})
            for p in c.pools:
                kind = pool_kind(p)
                self._kinds[(c.name, p.name)] = kind
                here[kind] = here.get(kind, 0) + p.nodes
                total[kind] += p.nodes
        pressure: dict[str, float] = {}  # summed in statement order: the same in every process
        usable_memo: dict[tuple[tuple[str, ...], bool, tuple[str, ...]], int] = {}  # many state alike
        for d in demands:
            if d.key == me or not d.placeable() or d.replicas <= 0:
                continue
            for engine in d.engines:
                wanted = {o.kind: o.cost for o in engine.options if total[o.kind]}
                key = (d.clusters, d.all_but, tuple(wanted))
                usable = usable_memo.get(key)
                if usable is None:
                    usable = usable_memo[key] = _usable_nodes(d, wanted, nodes, total)
                if usable <= 0:
                    continue
                for kind, cost in wanted.items():
                    pressure[kind] = pressure.get(kind, 0.0) + d.replicas * cost / usable
        self._pressure = pressure

    def pressure(self, cluster: str, pool: str) -> float:
        """Nodes other demand wants, per node it could use, over the pool's kind."""
        kind = self._kinds.get((cluster, pool))
        return self._pressure.get(kind, 0.0) if kind is not None else 0.0

    def cost(self, cluster: str, pool: str, devices: int) -> int:
        """What taking `devices` (on the nodes held) of `pool` costs the demand that presses on it, in devices."""
        return round(SCARCE * self.pressure(cluster, pool) * devices)


def _usable_nodes(
    demand: StatedDemand, wanted: dict[str, int], nodes: dict[str, dict[str, int]], total: Counter[str]
) -> int:
    """Nodes of the kinds in `wanted` on the clusters `demand` may use."""
    listed = 0
    for c in demand.clusters:
        for kind, n in nodes.get(c, {}).items():  # a cluster has a few kinds; a statement may want many
            if kind in wanted:
                listed += n
    # all_but: the fleet, less the few clusters it may not use
    return sum(total[k] for k in wanted) - listed if demand.all_but else listed
