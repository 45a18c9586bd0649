"""Peak Python heap (tracemalloc) of one cold schedule() and one in-process RunFunction.

tracemalloc sees only allocations made through Python's allocators: the protobuf request and
response live in upb arenas and are not counted, so the RunFunction figure is the cost of
converting and parsing the fleet plus scheduling and composing on top of the request itself.
"""

from __future__ import annotations

import asyncio
import gc
import tracemalloc
from collections.abc import Callable
from typing import Any

from crossplane.function import logging
from modelplane.scheduler import schedule
from modelplane_function.server.fn import FunctionRunner

from tests.benchmarks.cases import Case


def _peak(fn: Callable[[], Any]) -> float:
    gc.collect()
    tracemalloc.start()
    try:
        fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak / (1024 * 1024)


def peak_memory(c: Case) -> list[tuple[str, float]]:
    """(what, MiB) for schedule() cold and steady and RunFunction cold, in process."""
    logging.configure(level=logging.Level.DISABLED)
    runner = FunctionRunner()
    req = c.cold_request()
    return [
        ("schedule() cold", _peak(lambda: schedule(*c.cold_args()))),
        ("schedule() steady", _peak(lambda: schedule(*c.steady_args()))),
        ("RunFunction cold (in process, excl. protobuf)", _peak(lambda: asyncio.run(runner.RunFunction(req, None)))),
    ]
