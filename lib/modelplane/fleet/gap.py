"""What a fleet plan leaves on the table: GPUs placed, idle on held nodes, and what blocks unplaced demand.

GPUs are the DRA devices of the pools (a Synthetic NIC is not one). A replica on a whole-node pool
holds its nodes' every device; on a shared pool (`packing: Devices`) its pods' devices fill nodes
at the least as devices / devices per node, rounded up. Stranded GPUs are the held nodes' devices
no replica claims.

A deployment with unplaced replicas is blocked by the replicas of other deployments that hold the
pools it could use (its engines' devices match there) on the clusters that would take it but for
capacity: moving one of them elsewhere is what would make room.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from modelplane.devices import DeviceMatcher
from modelplane.fleet.view import ClusterView
from modelplane.model import Cluster, Deployment, ModelReplica
from modelplane.scheduler.capacity import dra_devices_per_node, shares_devices
from modelplane.scheduler.demand import Demand
from modelplane.scheduler.engines import EngineOptions
from modelplane.scheduler.ledger import Ledger
from modelplane.scheduler.state import state_demand


@dataclass(frozen=True, slots=True, kw_only=True)
class Gpus:
    fleet: int  # every pool's devices
    placed: int  # claimed by the fleet's replicas
    held: int  # on the nodes those replicas hold

    @property
    def stranded(self) -> int:
        return self.held - self.placed


def gpus(clusters: Sequence[ClusterView]) -> Gpus:
    fleet = placed = held = 0
    for c in clusters:
        for pool in c.pools:
            claimed = sum(chip.devices for chip in pool.chips)
            fleet += pool.nodes * pool.per_node
            placed += claimed
            if pool.shared:
                held += -(-claimed // pool.per_node) * pool.per_node if pool.per_node else 0
            else:
                held += sum(chip.nodes for chip in pool.chips) * pool.per_node
    return Gpus(fleet=fleet, placed=placed, held=held)


@dataclass(frozen=True, slots=True, kw_only=True)
class Blocker:
    cluster: str
    pool: str
    holder: str  # namespace/deployment#index
    nodes: int  # what it holds there: nodes, or devices on a shared pool
    shared: bool

    def text(self) -> str:
        unit = "device" if self.shared else "node"
        return f"{self.holder} on {self.cluster}/{self.pool} ({self.nodes} {unit}{'' if self.nodes == 1 else 's'})"


def blockers(
    deployment: Deployment, clusters: Sequence[Cluster], replicas: Sequence[ModelReplica]
) -> tuple[Blocker, ...]:
    """Other deployments' replicas on the pools `deployment` could use where only capacity turns it away."""
    demand = Demand(state_demand(deployment, clusters, EngineOptions(deployment, DeviceMatcher())))
    pools = {(c.name, p.name): p for c in clusters for p in c.pools}
    usable = {key: pools[key] for key in demand.usable(clusters, demand.runner(Ledger(clusters)))}
    out: list[Blocker] = []
    for r in replicas:
        if (r.namespace, r.deployment) == (deployment.namespace, deployment.name):
            continue
        for pool, charge in sorted(r.charges_by_pool().items()):
            node_pool = usable.get((r.cluster, pool))
            if node_pool is None or charge.nodes <= 0:
                continue
            shared = shares_devices(node_pool)
            per_node = dra_devices_per_node(node_pool)
            # an exclusive replica's pods hold whole nodes there (scheduler/capacity.py)
            held = sum(g.pods * (per_node if g.whole else g.devices) for g in charge.groups) if shared else charge.nodes
            out.append(
                Blocker(
                    cluster=r.cluster,
                    pool=pool,
                    holder=f"{r.namespace}/{r.deployment}#{r.index}",
                    nodes=held,
                    shared=shared,
                )
            )
    return tuple(sorted(out, key=lambda b: (b.cluster, b.pool, b.holder)))
