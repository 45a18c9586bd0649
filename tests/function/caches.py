"""Every process-wide cache of the function, found by type in the loaded modules, to clear or squeeze.

Found rather than listed, so a cache added later is cleared and squeezed too: module-level
BytesLRUs (the device, pool, engine and compiled-selector tables), parse Memos and SelectorResults.
"""

from __future__ import annotations

import sys

import pytest
from modelplane.devices.memo import BytesLRU
from modelplane.devices.results import SelectorResults
from modelplane_function.handlers.memo import Memo

Cache = BytesLRU[object, object] | Memo[object] | SelectorResults
_PACKAGES = ("modelplane.", "modelplane_function.")


def process_caches() -> dict[str, Cache]:
    """Every module-level cache of the loaded project modules, by `module.name`."""
    found: dict[str, Cache] = {}
    for module_name, module in sorted(sys.modules.items()):
        if not module_name.startswith(_PACKAGES):
            continue
        for name, value in sorted(vars(module).items()):
            if isinstance(value, BytesLRU | Memo | SelectorResults) and all(value is not v for v in found.values()):
                found[f"{module_name}.{name}"] = value
    return found


def clear_all() -> None:
    for cache in process_caches().values():
        cache.clear()


def _squeezed(cache: Cache, monkeypatch: pytest.MonkeyPatch) -> None:
    """Bound `cache` to a few small entries, so every call evicts what earlier ones (and itself) put there."""
    if isinstance(cache, Memo):
        monkeypatch.setattr(cache, "_limit", 2)
    elif isinstance(cache, SelectorResults):
        monkeypatch.setattr(cache._cache, "max_bytes", 1024)
    else:
        monkeypatch.setattr(cache, "max_bytes", 16 * 1024)
    cache.clear()


def squeeze_all(monkeypatch: pytest.MonkeyPatch) -> None:
    """Squeeze every cache, until `monkeypatch` undoes it."""
    for cache in process_caches().values():
        _squeezed(cache, monkeypatch)
