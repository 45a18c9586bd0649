"""A pool's device kinds and a device's content digest, remembered per object across scheduling passes.

Matching keys everything on device content (driver, attributes, capacity) and pool content (its
kinds), never on names, so identical GPUs across a fleet cost one CEL evaluation. Reading that
content means sorting every device's attributes: at 1,000 clusters x 8 pools that was half of a
cold schedule() call, repeated on every call although the function keeps parsed clusters (and so
the very same pool and device objects) across calls. Domain values are immutable, so the result
is a pure function of the object: it is kept under the object's id, with the object itself, which
both proves the id still names it and keeps the id from being reused while the entry lives. Each
table is bounded by the memory its entries keep alive (a device with large attributes weighs
more); past its budget the least recently used entries go first.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable
from typing import TypeVar

from modelplane.devices.memo import BytesLRU, digest
from modelplane.model import Device, NodePool

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

# Estimated bytes per table. The benchmark's 1,000 clusters x 8 pools (11,000 devices, 8,000 pools,
# ~20 distinct contents) are estimated at 28 MiB of devices and 31 MiB of pools with their
# devices (each table is charged in full for the devices it keeps alive, though they share
# them): these keep such a fleet whole and cap what a churning fleet can hold.
DIGESTS_BYTES = 40 * 2**20
POOLS_BYTES = 48 * 2**20
CONTENTS_BYTES = 16 * 2**20
# Estimated bytes of a device: the object, and per attribute or capacity its entry and value objects.
_DEVICE, _PER_ENTRY = 600, 320
_POOL = 400  # a pool and its kinds tuple, besides its devices

_digests: BytesLRU[int, tuple[Device, bytes]] = BytesLRU(max_bytes=DIGESTS_BYTES)
_pools: BytesLRU[int, tuple[NodePool, tuple[Device, ...], Hashable]] = BytesLRU(max_bytes=POOLS_BYTES)
# device content -> digest, so equal contents are digested once
_by_content: BytesLRU[Hashable, bytes] = BytesLRU(max_bytes=CONTENTS_BYTES)
# An in-process server schedules on several threads; evicting while another thread inserts would
# break the iteration that finds the oldest entry.
_lock = threading.Lock()


def device_bytes(device: Device) -> int:
    """What a device keeps alive, estimated: its strings counted twice, for the objects around them."""
    attributes = sum(_PER_ENTRY + 2 * (len(k) + len(str(a.value))) for k, a in device.attributes.items())
    capacity = sum(_PER_ENTRY + 2 * len(k) for k in device.capacity)
    return _DEVICE + 2 * len(device.driver) + attributes + capacity


def device_digest(device: Device) -> bytes:
    """A digest of the device's content as CEL sees it: driver, attributes and capacity, never its name."""
    with _lock:
        entry = _digests.get(id(device))
    if entry is not None and entry[0] is device:
        return entry[1]
    # str(): the type's value as a plain str, without Enum's slow `value` property.
    content = (
        device.driver,
        tuple(sorted([(key, str(attr.type), attr.value) for key, attr in device.attributes.items()])),
        tuple(sorted(device.capacity.items())),
    )
    size = device_bytes(device)
    with _lock:
        known = _by_content.get(content)
    if known is None:
        known = digest(repr(content))
        _remember(_by_content, content, known, size)
    _remember(_digests, id(device), (device, known), size)
    return known


def pool_kinds(pool: NodePool) -> tuple[tuple[Device, ...], Hashable]:
    """The pool's device kinds sorted by name, and a key equal for pools of equal content."""
    with _lock:
        entry = _pools.get(id(pool))
    if entry is not None and entry[0] is pool:
        return entry[1], entry[2]
    kinds = tuple(sorted(pool.devices, key=lambda device: device.name))
    content = tuple([(device_digest(k), k.name, k.claim, k.device_class_name, k.count) for k in kinds])
    size = _POOL + sum(device_bytes(k) for k in kinds)
    _remember(_pools, id(pool), (pool, kinds, content), size)
    return kinds, content


def _remember(table: BytesLRU[K, V], key: K, value: V, size: int) -> None:
    with _lock:
        table.put(key, value, size)
