"""Every cache a request can fill holds no more memory than its byte budget, whatever churns through it.

Each case shrinks one cache's budget to 2 MiB, churns ~12 MiB of unique content through the code
path that fills it (clusters with large device attributes, replicas with long selectors, devices
never seen before) and measures, with tracemalloc, the memory still held afterwards: the entries
must be charged at least what they keep alive. Counted in entries, these caches held 207 MiB
(device lists) and 86 MiB (validated devices) after ten calls of a churning fleet.
"""

from __future__ import annotations

import gc
import tracemalloc
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from modelplane.devices import kinds
from modelplane.devices.memo import BytesLRU
from modelplane_function.handlers import ledger, pools

from tests.devices.factories import attr, device, pool
from tests.function.factories import cluster, struct
from tests.function.wants import replica

BUDGET = 2 * 2**20
SLACK = 512 * 1024  # what the churn itself leaves behind: interned strings, allocator slack
ATTRIBUTES = 32  # the XRD's most per device


def _clusters(n: int) -> Iterator[Any]:
    """Published clusters of 4 pools x 4 devices, every attribute value unique and 200 characters long."""
    for i in range(n):
        obj = cluster(f"c{i}")
        template = obj["spec"].pop("nodePools")[0]
        obj["status"] = {
            "gpuPools": [
                {
                    **template,
                    "name": f"p{j}",
                    "devices": [
                        {
                            **template["devices"][0],
                            "name": f"d{k}",
                            "attributes": {
                                f"a{a}": {"string": f"{i}-{j}-{k}-{a}-".ljust(200, "v")} for a in range(ATTRIBUTES)
                            },
                        }
                        for k in range(4)
                    ],
                }
                for j in range(4)
            ]
        }
        yield struct(obj)


def _read_clusters() -> None:
    for s in _clusters(40):
        pools.read_cluster(s)


def _read_replicas() -> None:
    for i in range(400):
        selector = f'device.driver == "gpu.nvidia.com" && "{i}".size() < {"9" * 30_000}'
        pools_ = replica("a", i, cel=selector)
        ledger.read_ledger_replica(struct(pools_))


def _digest_devices() -> None:
    for i in range(2_000):
        attributes = {f"a{a}": attr(f"{i}-{a}-".ljust(200, "v")) for a in range(ATTRIBUTES)}
        kinds.pool_kinds(pool(device(attributes=attributes), name=f"p{i}"))


@dataclass(frozen=True)
class Case:
    name: str
    caches: Callable[[], list[BytesLRU[Any, Any]]]  # the caches the churn fills, the first being the one tested
    churn: Callable[[], None]


CASES = [
    Case("device lists of published pools (pools._LISTS)", lambda: [pools._LISTS, pools._DEVICES], _read_clusters),  # pyright: ignore[reportPrivateUsage]
    Case("validated devices (pools._DEVICES)", lambda: [pools._DEVICES, pools._LISTS], _read_clusters),  # pyright: ignore[reportPrivateUsage]
    Case("ledger engines (ledger._ENGINES)", lambda: [ledger._ENGINES], _read_replicas),  # pyright: ignore[reportPrivateUsage]
    Case("device digests (kinds._digests)", lambda: [kinds._digests, kinds._by_content, kinds._pools], _digest_devices),  # pyright: ignore[reportPrivateUsage]
    Case("content digests (kinds._by_content)", lambda: [kinds._by_content, kinds._digests, kinds._pools], _digest_devices),  # pyright: ignore[reportPrivateUsage]
    Case("pool kinds (kinds._pools)", lambda: [kinds._pools, kinds._digests, kinds._by_content], _digest_devices),  # pyright: ignore[reportPrivateUsage]
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_a_churned_cache_holds_no_more_than_its_budget(case: Case, monkeypatch: pytest.MonkeyPatch) -> None:
    tested, *others = case.caches()
    monkeypatch.setattr(tested, "max_bytes", BUDGET)
    for other in others:  # keep nothing, so what is held is the tested cache's
        monkeypatch.setattr(other, "max_bytes", 0)
    for cache in (tested, *others):
        cache.clear()
    gc.collect()
    tracemalloc.start()
    try:
        baseline = tracemalloc.get_traced_memory()[0]
        case.churn()
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - baseline
        charged, entries = tested.bytes, len(tested)
    finally:
        tracemalloc.stop()
        for cache in (tested, *others):
            cache.clear()
    assert (held <= BUDGET + SLACK, charged <= BUDGET, entries > 0) == (True, True, True), (
        f"held {held / 2**20:.2f} MiB, charged {charged / 2**20:.2f} MiB in {entries} entries"
    )
