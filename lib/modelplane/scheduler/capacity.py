"""What one pool can still be promised: whole nodes, or devices under a conservative sharing model.

A `packing: Nodes` pool (the default) counts whole nodes: every claiming pod holds one.

On a `packing: Devices` pool, pods of several replicas share nodes, and the cluster's own scheduler
(not the fleet) chooses which node each pod lands on. So the fleet promises a set of pods only when
every order and every choice of node an any-fit scheduler (one that binds a pod to some node with
room, as KAI's bin-packing does) could make still finds room for each of them:

- a *group* is the pods that must land on distinct nodes: one copy of a gang (a Leader and its
  Workers, one pod per node), or a single Standalone pod. A group of k pods of at most s devices
  each is modelled as k pods of s devices;
- a node turns a pod of s devices away once it holds more than G - s of its G devices, and the
  least it can hold then is b(s): the smallest sum of the pool's pod sizes above G - s;
- with the other pods holding U' devices, at most U' // b(s) nodes are full for it, so the group
  finds k distinct nodes with room when N - U' // b(s) >= k.

The pool holds its groups when that is true of every group against all the others (so any of them
can be re-placed, after a node drains, whatever the others did) and the devices add up to at most
N x G. A node's own devices are then never exceeded under the model: tests/scheduler check it by
letting a random any-fit scheduler place the groups in random orders.

A group of an exclusive deployment (`whole`) counts G devices a pod, whatever it claims: its pods'
anti-affinity turns away every other deployment's pod from their nodes, so such a node is full to
the others, and a node holding any other pod turns its pods away, which is the model's rule for a
pod of G devices (b(G) is the smallest pod size). Its own pods may share a node, which holds less
than the model charges.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Protocol

from modelplane.model import DeviceGroup, NodePool, PoolCharge, PoolPacking


class PoolCapacity(Protocol):
    def fits(self, charge: PoolCharge) -> bool: ...
    def take(self, charge: PoolCharge, *, sign: int = 1) -> None: ...
    def holds(self) -> bool: ...
    def free_nodes(self) -> int: ...
    def state(self) -> object: ...
    def copy(self) -> PoolCapacity: ...
    def describe(self) -> str: ...


@dataclass(slots=True)
class NodeCapacity:
    free: int  # may go negative when observed state overcommits the pool

    def fits(self, charge: PoolCharge) -> bool:
        return charge.nodes <= 0 or charge.nodes <= self.free

    def take(self, charge: PoolCharge, *, sign: int = 1) -> None:
        self.free -= sign * charge.nodes

    def holds(self) -> bool:
        return self.free >= 0

    def free_nodes(self) -> int:
        return self.free

    def state(self) -> object:
        return self.free

    def copy(self) -> NodeCapacity:
        return NodeCapacity(self.free)

    def describe(self) -> str:
        n = max(self.free, 0)
        return f"{n} free {'node' if n == 1 else 'nodes'}"


@dataclass(slots=True)
class DeviceCapacity:
    nodes: int
    per_node: int  # DRA devices per node
    used: int = 0
    groups: Counter[DeviceGroup] | None = None

    def fits(self, charge: PoolCharge) -> bool:
        if not charge.groups:
            return True
        trial = self.copy()
        trial.take(charge)
        return trial.holds()

    def devices(self, group: DeviceGroup) -> int:
        """What one pod of `group` holds here: its devices, or the whole node for an exclusive group."""
        return self.per_node if group.whole else group.devices

    def take(self, charge: PoolCharge, *, sign: int = 1) -> None:
        groups = self.groups if self.groups is not None else Counter[DeviceGroup]()
        for g in charge.groups:
            groups[g] += sign
            self.used += sign * g.pods * self.devices(g)
        self.groups = +groups  # drop groups given back

    def holds(self) -> bool:
        groups = self.groups or Counter[DeviceGroup]()
        if self.used > self.nodes * self.per_node:
            return False
        sizes = {self.devices(g) for g in groups}
        return all(self._group_fits(g, sizes) for g in groups)

    def _group_fits(self, group: DeviceGroup, sizes: set[int]) -> bool:
        if group.devices > self.per_node or group.pods > self.nodes:
            return False
        devices = self.devices(group)
        full_at = _least_above(self.per_node - devices, self.per_node, sizes)
        if full_at is None:  # no mix of the pool's pod sizes can turn this group away from a node
            return True
        others = self.used - group.pods * devices
        return self.nodes - others // full_at >= group.pods

    def free_nodes(self) -> int:
        return (self.nodes * self.per_node - self.used) // self.per_node if self.per_node else 0

    def state(self) -> object:
        return (self.used, tuple(sorted((self.groups or Counter[DeviceGroup]()).items())))

    def copy(self) -> DeviceCapacity:
        return DeviceCapacity(
            nodes=self.nodes,
            per_node=self.per_node,
            used=self.used,
            groups=Counter(self.groups) if self.groups else None,
        )

    def describe(self) -> str:
        free = max(self.nodes * self.per_node - self.used, 0)
        return f"{free} free {'device' if free == 1 else 'devices'} on {self.nodes} shared nodes"


def _least_above(low: int, high: int, sizes: Iterable[int]) -> int | None:
    """The smallest sum of `sizes` (each any number of times) in (low, high], or None."""
    reachable = [False] * (high + 1)
    reachable[0] = True
    parts = sorted({s for s in sizes if s > 0})
    for total in range(1, high + 1):
        reachable[total] = any(s <= total and reachable[total - s] for s in parts)
    return next((v for v in range(low + 1, high + 1) if reachable[v]), None)


def dra_devices_per_node(pool: NodePool) -> int:
    return sum(d.count for d in pool.devices if d.claim == "DRA" and d.count > 0)


def shares_devices(pool: NodePool) -> bool:
    """Whether the pool's nodes are shared by devices: `packing: Devices` with one DRA device kind.

    With several DRA kinds per node (GPUs and DRA NICs) a pod's devices are not one number, so such a
    pool is counted in whole nodes, which is always safe.
    """
    kinds = [d for d in pool.devices if d.claim == "DRA" and d.count > 0]
    return pool.packing is PoolPacking.DEVICES and len(kinds) == 1


def capacity(pool: NodePool) -> PoolCapacity:
    """An empty pool's capacity."""
    if shares_devices(pool):
        return DeviceCapacity(nodes=pool.nodes, per_node=dra_devices_per_node(pool))
    return NodeCapacity(pool.nodes)


def capacities(pools: Iterable[NodePool]) -> dict[str, PoolCapacity]:
    return {p.name: capacity(p) for p in pools}


def take_all(caps: Mapping[str, PoolCapacity], charges: Mapping[str, PoolCharge], *, sign: int = 1) -> None:
    """Charge every pool the cluster publishes; charges against other pools hold nothing."""
    for pool, charge in charges.items():
        cap = caps.get(pool)
        if cap is not None:
            cap.take(charge, sign=sign)
