"""Selector outcomes shared across scheduling passes, keyed by digests and bounded by bytes.

A long-running caller (the function) keeps one: every deployment's call sees the same fleet, so
after the first call no CEL is evaluated until a device kind or a selector changes. Each entry is
a 32-byte key (device content digest + expression digest) and an outcome; an error outcome is also
charged its text.
"""

from __future__ import annotations

from modelplane.devices.cel import Outcome
from modelplane.devices.memo import ByteBoundedCache

RESULT_BYTES = 8 * 1024 * 1024  # budget of the selector results shared across calls
_RESULT_ENTRY = 160  # estimated bytes of one cached outcome: its 32-byte key and the dict slot


class SelectorResults:
    """Selector outcomes per (device content, expression), keyed by digests and bounded by bytes."""

    def __init__(self, *, max_bytes: int = RESULT_BYTES) -> None:
        self._cache: ByteBoundedCache[Outcome] = ByteBoundedCache(max_bytes=max_bytes)

    def __len__(self) -> int:
        return len(self._cache)

    @property
    def bytes(self) -> int:
        return self._cache.bytes

    def clear(self) -> None:
        """Forget every outcome: the next pass evaluates afresh, to the same outcomes."""
        self._cache.clear()

    def get(self, key: bytes) -> Outcome | None:
        return self._cache.get(key)

    def put(self, key: bytes, outcome: Outcome) -> None:
        self._cache.put(key, outcome, _RESULT_ENTRY + (len(outcome) if isinstance(outcome, str) else 0))
