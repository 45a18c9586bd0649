"""Bounds of the CEL pipeline under hostile input: quantity scanning time and selector-cache memory.

Run `python -m tests.benchmarks.cel_bounds` (about a minute on 2 cores). It prints:

- how long `isQuantity` takes on a run of digits with a bad suffix, by length (the old pattern
  backtracked quadratically: ~23 s at 10,000 digits, every other request waiting behind it);
- the RSS of a `modelplane serve` process fed requests whose selectors are all distinct and as
  long as the XRD allows, every `--every` requests: with the caches bounded by bytes it levels off.

Figures only: no assertion depends on a clock (tests/devices/test_quantity.py counts the scanner's
reads instead, tests/devices/test_memo.py the caches' bytes).
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from modelplane.devices.quantity import is_quantity

from tests.benchmarks import fleet
from tests.benchmarks.load import rss_kib
from tests.benchmarks.rpc import request, served
from tests.benchmarks.shapes import Shape, deployment

SELECTOR_CHARS = 8_000  # under the XRD's 8,192 per selector
SELECTORS = 7  # per request: 56,000 characters, under the 64 KiB a deployment may hold


def quantity_times(lengths: tuple[int, ...] = (100, 1_000, 10_000, 100_000)) -> list[tuple[int, float]]:
    """(digits, milliseconds) for isQuantity("1" * digits + "x")."""
    out: list[tuple[int, float]] = []
    for digits in lengths:
        text = "1" * digits + "x"
        start = time.perf_counter()
        is_quantity(text)
        out.append((digits, (time.perf_counter() - start) * 1000))
    return out


def _selectors(call: int) -> list[dict[str, str]]:
    out: list[dict[str, str]] = []
    for j in range(SELECTORS):
        clause = f'device.driver != "c{call}-s{j}-'
        parts: list[str] = []
        k = 0
        while sum(len(p) + 4 for p in parts) < SELECTOR_CHARS - 60:
            parts.append(f'{clause}{k:04d}"')
            k += 1
        parts.append('device.driver == "gpu.nvidia.com"')
        out.append({"cel": " && ".join(parts)})
    return out


def _distinct(xr: dict[str, Any], call: int) -> dict[str, Any]:
    member = xr["spec"]["template"]["spec"]["engines"][0]["members"][0]
    member["nodeSelector"]["devices"][0]["selectors"] = _selectors(call)
    return xr


def rss_growth(calls: int, every: int) -> list[tuple[int, float]]:
    """(calls made, server RSS MiB) while every request brings new, maximal selectors."""
    f = fleet.generate(clusters=5, pools=4, existing=0, seed=3)
    out: list[tuple[int, float]] = []
    with served(max_recv_mib=8) as server:
        for call in range(calls + 1):
            if call % every == 0:
                out.append((call, rss_kib(server.pid) / 1024))
            if call == calls:
                break
            xr = _distinct(deployment(Shape.STANDALONE, replicas=1, name="hostile"), call)
            server.client.run(request(xr, observed={}, clusters=f.clusters, replicas=[], namespace=f.namespace))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--calls", type=int, default=120)
    parser.add_argument("--every", type=int, default=20)
    parser.add_argument("--digits", type=int, nargs="*", default=[100, 1_000, 10_000, 100_000])
    args = parser.parse_args()
    print("isQuantity(digits + 'x'):")
    for digits, ms in quantity_times(tuple(args.digits)):
        print(f"  {digits:>7} digits  {ms:10.3f} ms")
    print(f"server RSS, each request with {SELECTORS} distinct selectors of ~{SELECTOR_CHARS} characters:")
    for call, mib in rss_growth(args.calls, args.every):
        print(f"  after {call:>4} requests  {mib:7.1f} MiB")


if __name__ == "__main__":
    main()
