"""A pool's device kinds and a device's content digest, remembered per object across scheduling passes.

Matching keys everything on device content (driver, attributes, capacity) and pool content (its
kinds), never on names, so identical GPUs across a fleet cost one CEL evaluation. Reading that
content means sorting every device's attributes: at 1,000 clusters x 8 pools that was half of a
cold schedule() call, repeated on every call although the function keeps parsed clusters (and so
the very same pool and device objects) across calls. Domain values are immutable, so the result
is a pure function of the object: it is kept under the object's id, with the object itself, which
both proves the id still names it and keeps the id from being reused while the entry lives. Each
table is bounded; past its limit the oldest entries go first.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable
from typing import TypeVar

from modelplane.devices.memo import digest
from modelplane.model import Device, NodePool

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

# Objects per table. A fleet of 1,000 clusters x 8 pools has ~11,000 devices and 8,000 pools, and
# an entry holds its object alive (~1 KiB a device, more for a pool with its devices): this keeps
# such a fleet whole and caps what a churning fleet can hold at a few tens of MiB.
LIMIT = 20_000

_digests: dict[int, tuple[Device, bytes]] = {}
_pools: dict[int, tuple[NodePool, tuple[Device, ...], Hashable]] = {}
_by_content: dict[Hashable, bytes] = {}  # device content -> digest, so equal contents are digested once
# An in-process server schedules on several threads; evicting while another thread inserts would
# break the iteration that finds the oldest entry.
_lock = threading.Lock()


def device_digest(device: Device) -> bytes:
    """A digest of the device's content as CEL sees it: driver, attributes and capacity, never its name."""
    entry = _digests.get(id(device))
    if entry is not None and entry[0] is device:
        return entry[1]
    # str(): the type's value as a plain str, without Enum's slow `value` property.
    content = (
        device.driver,
        tuple(sorted([(key, str(attr.type), attr.value) for key, attr in device.attributes.items()])),
        tuple(sorted(device.capacity.items())),
    )
    known = _by_content.get(content)
    if known is None:
        known = digest(repr(content))
        _remember(_by_content, content, known)
    _remember(_digests, id(device), (device, known))
    return known


def pool_kinds(pool: NodePool) -> tuple[tuple[Device, ...], Hashable]:
    """The pool's device kinds sorted by name, and a key equal for pools of equal content."""
    entry = _pools.get(id(pool))
    if entry is not None and entry[0] is pool:
        return entry[1], entry[2]
    kinds = tuple(sorted(pool.devices, key=lambda device: device.name))
    content = tuple([(device_digest(k), k.name, k.claim, k.device_class_name, k.count) for k in kinds])
    _remember(_pools, id(pool), (pool, kinds, content))
    return kinds, content


def _remember(table: dict[K, V], key: K, value: V) -> None:
    with _lock:
        table[key] = value
        if len(table) > LIMIT:
            del table[next(iter(table))]
