"""Demand as its owner states it: what other deployments may know of a deployment.

Held room and moves (modelplane.scheduler.reserve, .displace) need to know what other deployments
still lack and where they could go. They never read another tenant's spec for it: a tenant's
selectors, tolerations and namespace labels are its own reconcile's business, and one bad spec
must not reach anyone else's. Instead each deployment's own reconcile states, in a compact and
bounded form (the ModelDemand it composes), how many replicas it wants, how many devices one
claims, the clusters that pass every filter only the owner can run (namespace admission,
clusterSelector, taints, KAI queue and priority rules), and for each engine the kinds of pool its
device selectors match, with the engine's cost on each. A pool's kind is a digest of its device
content (pool_kind), which every reader computes for itself from the same InferenceCluster.
Capacity and readiness are left to the reader: they change without the owner's spec changing.

A statement carries no template, no selector and no name of anything outside the fleet, so what
one call reads about other tenants is bounded by the ModelDemand schema whatever they write.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Hashable
from dataclasses import dataclass
from fractions import Fraction

from modelplane.devices.kinds import pool_kinds
from modelplane.devices.memo import BytesLRU
from modelplane.model import NodePool, PoolCharge

KIND_LENGTH = 16  # hex characters of a pool kind
# What one statement may hold, whatever the fleet: the ModelDemand XRD bounds the same.
MAX_CLUSTERS = 2048  # cluster names
MAX_KINDS = 256  # pool kinds per engine (a fleet has tens)


def pool_kind(pool: NodePool) -> str:
    """A name for the pool's device content and packing, the same in every process that reads the pool.

    Engine options depend on nothing else of a pool (engines.py), so equal kinds cost the same.
    """
    with _lock:
        seen = _by_pool.get(id(pool))
    if seen is not None and seen[0] is pool:  # the same parsed pool as before (the memo keeps them)
        return seen[1]
    _, content = pool_kinds(pool)
    key = (content, str(pool.packing))
    with _lock:
        kind = _by_content.get(key)
    if kind is None:
        kind = hashlib.blake2b(repr(key).encode(), digest_size=KIND_LENGTH // 2).hexdigest()
    with _lock:
        _by_content.put(key, kind, _ENTRY_BYTES)
        _by_pool.put(id(pool), (pool, kind), _ENTRY_BYTES)  # the pool is held by the device tables too
    return kind


# Byte-bounded like every cache of the process; an entry is a key, a 16-character kind and references.
_ENTRY_BYTES = 512
_lock = threading.Lock()
_by_content: BytesLRU[tuple[Hashable, str], str] = BytesLRU(max_bytes=4 * 2**20)
_by_pool: BytesLRU[int, tuple[NodePool, str]] = BytesLRU(max_bytes=4 * 2**20)  # checked by identity: ids are reused


@dataclass(frozen=True, slots=True, kw_only=True)
class StatedOption:
    """One engine on every pool of one kind (`kind`: pool_kind() of its content): what it costs there."""

    kind: str
    cost: int  # nodes
    charge: PoolCharge
    claimed: int = 0  # DRA devices the engine's pods claim
    idle: int = 0  # devices left unclaimed on the nodes it holds
    spare: int = 0  # Synthetic device kinds on those nodes that it does not ask for, per node
    size: Fraction = Fraction(0)  # the claimed device kind's capacities summed (packing.py ranks by it)


@dataclass(frozen=True, slots=True, kw_only=True)
class StatedEngine:
    name: str
    options: tuple[StatedOption, ...]  # sorted by kind


@dataclass(frozen=True, slots=True, kw_only=True)
class StatedDemand:
    """A deployment's demand as its own last reconcile stated it.

    `clusters` are the clusters it may use, or with `all_but` the ones it may not (whichever is
    shorter): a deployment without a clusterSelector states a few names, not the fleet. A cluster
    created after the statement is read as its owner's next reconcile will most likely state it.
    """

    namespace: str
    name: str
    replicas: int  # wanted; what it lacks is that minus the replicas the fleet observes
    devices: int = 0  # devices one replica claims: the fleet serves demand with the most first
    movable: bool = True  # its Ready replicas may move to make room for others
    strict_spread: bool = False
    clusters: tuple[str, ...] = ()  # sorted
    all_but: bool = False
    engines: tuple[StatedEngine, ...] = ()  # empty: it states no demand (invalid spec, refused, ...)
    truncated: bool = False  # the statement hit its size bound: some usable clusters are left out
    # The PriorityClass it names ("": none); readers take its value from the PriorityClass object,
    # and only on clusters whose KAI rules let its namespace use it.
    priority_class: str = ""

    @property
    def key(self) -> tuple[str, str]:
        return (self.namespace, self.name)

    @property
    def subject(self) -> str:
        return f"{self.namespace}/{self.name}"

    def placeable(self) -> bool:
        """Whether every engine has somewhere to go: demand that fits nowhere states nothing to hold."""
        return bool(self.engines) and all(e.options for e in self.engines) and (self.all_but or bool(self.clusters))

    def may_use(self, cluster: str) -> bool:
        return (cluster in self.clusters) != self.all_but


def withdrawn(namespace: str, name: str) -> StatedDemand:
    """A statement of no demand: what a deployment states when it cannot decide (its spec is refused)."""
    return StatedDemand(namespace=namespace, name=name, replicas=0, movable=False)
