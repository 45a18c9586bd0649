"""Repeat a call until a time budget is spent and summarise its wall times."""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True, kw_only=True)
class Timing:
    median: float  # seconds
    p95: float
    runs: int
    first: float  # the untimed warm-up call: cold caches (a freshly started server)

    def ms(self) -> str:
        return f"{self.median * 1000:8.1f} {self.p95 * 1000:8.1f}"


def measure(fn: Callable[[], Any], *, budget: float = 2.0, min_runs: int = 3, max_runs: int = 50) -> Timing:
    """One warm-up call (reported apart), then at least `min_runs` timed calls and more while within `budget` seconds."""
    start = time.perf_counter()
    fn()
    first = time.perf_counter() - start
    times: list[float] = []
    spent = 0.0
    while len(times) < min_runs or (spent < budget and len(times) < max_runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
        spent += times[-1]
    # p95 by the nearest-rank rule: with few runs it is the slowest one.
    ranked = sorted(times)
    p95 = ranked[math.ceil(0.95 * len(ranked)) - 1]
    return Timing(median=statistics.median(times), p95=p95, runs=len(times), first=first)
