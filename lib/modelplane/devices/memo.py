"""Caches bounded by the bytes they hold, keyed by short digests.

Selector caches live as long as the function process, and their keys and values come from
requests: counted in entries, a cache keyed by 10 KiB expressions holding compiled programs could
reach a gibibyte. These count an estimate of each entry's bytes instead, evict the least recently
used entries past the budget, and key entries by 16-byte digests rather than by the text.
"""

from __future__ import annotations

import hashlib
from typing import Generic, TypeVar

V = TypeVar("V")

DIGEST_SIZE = 16


def digest(text: str | bytes) -> bytes:
    """A 16-byte digest of the text: a compact, collision-safe cache key."""
    data = text.encode() if isinstance(text, str) else text
    return hashlib.blake2b(data, digest_size=DIGEST_SIZE).digest()


class ByteBoundedCache(Generic[V]):
    """Least-recently-used cache of at most `max_bytes` (as estimated by the caller on `put`)."""

    def __init__(self, *, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._entries: dict[bytes, tuple[V, int]] = {}
        self._bytes = 0

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def bytes(self) -> int:
        return self._bytes

    def get(self, key: bytes) -> V | None:
        entry = self._entries.pop(key, None)
        if entry is None:
            return None
        self._entries[key] = entry  # now the most recently used
        return entry[0]

    def put(self, key: bytes, value: V, size: int) -> None:
        """Store `value`, estimated at `size` bytes; an entry larger than the budget is not kept."""
        old = self._entries.pop(key, None)
        if old is not None:
            self._bytes -= old[1]
        if size > self.max_bytes:
            return
        while self._entries and self._bytes + size > self.max_bytes:
            evicted = next(iter(self._entries))
            self._bytes -= self._entries.pop(evicted)[1]
        self._entries[key] = (value, size)
        self._bytes += size

    def clear(self) -> None:
        self._entries.clear()
        self._bytes = 0
