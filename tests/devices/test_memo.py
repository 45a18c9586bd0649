"""The byte-bounded cache behind the CEL caches: least recently used first out, never over budget."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from modelplane.devices import MAX_EXPRESSION_LENGTH, compile_selector
from modelplane.devices import cel as cel_module
from modelplane.devices.memo import DIGEST_SIZE, ByteBoundedCache, digest


@dataclass(frozen=True)
class Case:
    name: str
    operations: tuple[tuple[str, str, int], ...]  # ("put", key, size) or ("get", key, 0)
    want: tuple[tuple[str, ...], int]  # kept keys, oldest first, and bytes held


CASES = [
    Case("entries within the budget are all kept", (("put", "a", 4), ("put", "b", 4)), (("a", "b"), 8)),
    Case("the least recently put goes first", (("put", "a", 4), ("put", "b", 4), ("put", "c", 4)), (("b", "c"), 8)),
    Case(
        "a read makes an entry the most recent",
        (("put", "a", 4), ("put", "b", 4), ("get", "a", 0), ("put", "c", 4)),
        (("a", "c"), 8),
    ),
    Case("an entry larger than the budget is not kept", (("put", "a", 4), ("put", "big", 11)), (("a",), 4)),
    Case("replacing an entry charges its new size", (("put", "a", 4), ("put", "a", 6)), (("a",), 6)),
    Case("a large entry evicts as many as it needs", (("put", "a", 3), ("put", "b", 3), ("put", "c", 9)), (("c",), 9)),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_byte_bounded_cache(case: Case) -> None:
    cache: ByteBoundedCache[str] = ByteBoundedCache(max_bytes=10)
    for op, key, size in case.operations:
        if op == "put":
            cache.put(key.encode(), key, size)
        else:
            cache.get(key.encode())
    kept = tuple(k for k in ("a", "b", "c", "big") if cache.get(k.encode()) is not None)
    assert (kept, cache.bytes) == case.want


def test_the_compile_cache_is_keyed_by_digests_and_bounded_by_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Selectors of the maximum length: the cache keeps 16-byte keys and never holds more than its budget."""
    budget = 4 * 1024 * 1024
    cache: ByteBoundedCache[object] = ByteBoundedCache(max_bytes=budget)
    monkeypatch.setattr(cel_module, "_cache", cache)
    padding = " && ".join(f'device.driver != "{i:05d}"' for i in range(360))
    for i in range(12):
        expression = f'device.driver != "{i}" && {padding}'
        assert len(expression) <= MAX_EXPRESSION_LENGTH
        compile_selector(expression)
    keys = list(cache._entries)
    assert (cache.bytes <= budget, {len(k) for k in keys}, len(keys) < 12) == (True, {DIGEST_SIZE}, True)
    assert digest(f'device.driver != "11" && {padding}') in cache._entries
