"""Caches bounded by the bytes they hold, keyed by short digests.

Selector caches, like every cache of the function server, live as long as its process, and their
keys and values come from requests: counted in entries, a cache keyed by 10 KiB expressions holding
compiled programs could reach a gibibyte. These count an estimate of each entry's bytes instead,
evict the least recently used entries past the budget, and key entries by 16-byte digests rather
than by the text where they can.
"""

from __future__ import annotations

import hashlib
import sys
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator, MutableMapping
from typing import Any, Generic, TypeVar, cast

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

DIGEST_SIZE = 16


def digest(text: str | bytes) -> bytes:
    """A 16-byte digest of the text: a compact, collision-safe cache key."""
    data = text.encode() if isinstance(text, str) else text
    return hashlib.blake2b(data, digest_size=DIGEST_SIZE).digest()


class BytesLRU(MutableMapping[K, V], Generic[K, V]):
    """Least-recently-used map of at most `max_bytes`, each entry charged what the caller estimates.

    `put` names an entry's size; `cache[key] = value` charges `size(key, value)` (given at construction).
    """

    def __init__(self, *, max_bytes: int, size: Callable[[K, V], int] | None = None) -> None:
        self.max_bytes = max_bytes
        self._size = size
        self._entries: OrderedDict[K, tuple[V, int]] = OrderedDict()
        self._bytes = 0

    @property
    def bytes(self) -> int:
        return self._bytes

    def __getitem__(self, key: K) -> V:
        value = self._entries[key][0]
        self._entries.move_to_end(key)  # now the most recently used
        return value

    def __setitem__(self, key: K, value: V) -> None:
        if self._size is None:
            msg = "this cache is filled with put(), which names each entry's size"
            raise TypeError(msg)
        self.put(key, value, self._size(key, value))

    def put(self, key: K, value: V, size: int) -> None:
        """Store `value`, estimated at `size` bytes; an entry larger than the budget is not kept."""
        old = self._entries.pop(key, None)
        if old is not None:
            self._bytes -= old[1]
        if size > self.max_bytes:
            return
        while self._entries and self._bytes + size > self.max_bytes:
            self._bytes -= self._entries.popitem(last=False)[1][1]
        self._entries[key] = (value, size)
        self._bytes += size

    def __delitem__(self, key: K) -> None:
        self._bytes -= self._entries.pop(key)[1]

    def __iter__(self) -> Iterator[K]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        self._entries.clear()
        self._bytes = 0


class ByteBoundedCache(BytesLRU[bytes, V]):
    """A BytesLRU keyed by digests."""


def footprint(data: Any) -> int:
    """The memory plain data takes (dicts, lists, tuples, strings, numbers), object by object.

    Shared objects are counted each time they are reached: the estimate is never below the truth.
    """
    size = sys.getsizeof(data)
    if isinstance(data, dict):
        mapping = cast("dict[Any, Any]", data)
        return size + sum(footprint(k) + footprint(v) for k, v in mapping.items())
    if isinstance(data, list | tuple):
        return size + sum(footprint(v) for v in cast("list[Any] | tuple[Any, ...]", data))
    return size
