"""Content digests and pool kinds: keyed on what CEL sees, never on names or object identity."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from modelplane.devices import kinds
from modelplane.devices.kinds import device_digest, pool_kinds
from modelplane.devices.memo import BytesLRU
from modelplane.model import Device

from tests.devices.factories import attr, device, pool


@dataclass(frozen=True)
class DigestCase:
    name: str
    a: Device
    b: Device
    same: bool


H100 = {"productName": attr("NVIDIA H100")}

DIGEST_CASES = [
    DigestCase("another name, same content", device("gpu", attributes=H100), device("accel", attributes=H100), same=True),
    DigestCase("another count, same content", device(count=8, attributes=H100), device(count=4, attributes=H100), same=True),
    DigestCase("another attribute value", device(attributes=H100), device(attributes={"productName": attr("H200")}),
               same=False),
    DigestCase("a string and an int that print alike", device(attributes={"n": attr("1")}),
               device(attributes={"n": attr(1)}), same=False),
    DigestCase("a string and a version", device(attributes={"v": attr("1.2.3")}),
               device(attributes={"v": attr("1.2.3", version=True)}), same=False),
    DigestCase("another capacity", device(capacity={"memory": "80Gi"}), device(capacity={"memory": "141Gi"}), same=False),
    DigestCase("another driver", device(attributes=H100), device(driver="other.example.com", attributes=H100), same=False),
]  # fmt: skip


@pytest.mark.parametrize("case", DIGEST_CASES, ids=lambda c: c.name)
def test_device_digest_is_the_content_cel_sees(case: DigestCase) -> None:
    assert (device_digest(case.a) == device_digest(case.b)) is case.same


def test_pool_kinds_sort_by_name_and_key_equal_contents_alike() -> None:
    nic, gpu = device("nic", driver="net.example.com"), device("gpu", attributes=H100)
    first, second = pool(nic, gpu, name="a"), pool(gpu, nic, name="b")
    assert [k.name for k in pool_kinds(first)[0]] == ["gpu", "nic"]
    assert pool_kinds(first) == pool_kinds(second)
    assert pool_kinds(pool(gpu, name="c"))[1] != pool_kinds(first)[1]


def test_tables_stay_bounded_in_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    devices = [device(attributes={"i": attr(i)}) for i in range(10)]
    budget = 3 * kinds.device_bytes(devices[0])  # equal sizes: three entries
    monkeypatch.setattr(kinds, "_digests", BytesLRU(max_bytes=budget))
    monkeypatch.setattr(kinds, "_by_content", BytesLRU(max_bytes=budget))
    digests = [device_digest(d) for d in devices]
    held = (len(kinds._digests), len(kinds._by_content))  # pyright: ignore[reportPrivateUsage]
    assert (held, [device_digest(d) for d in devices]) == ((3, 3), digests)  # evicted entries are recomputed, equal
