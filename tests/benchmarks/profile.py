"""cProfile one benchmark case: schedule() cold and one in-process RunFunction, top functions by own time.

Usage: python -m tests.benchmarks.profile [--clusters C] [--existing E] [--new R] [--shape S] [--top N]
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import pstats
import sys
from collections.abc import Callable, Sequence
from typing import Any

from crossplane.function import logging
from modelplane.scheduler import schedule
from modelplane_function.server.fn import FunctionRunner

from tests.benchmarks.cases import Size, case
from tests.benchmarks.shapes import Shape


def _profile(title: str, fn: Callable[[], Any], top: int) -> None:
    fn()  # warm caches (compiled selectors) as a long-running server would have them
    profiler = cProfile.Profile()
    profiler.enable()
    fn()
    profiler.disable()
    print(f"\n== {title}")
    stats = pstats.Stats(profiler, stream=sys.stdout)
    stats.strip_dirs().sort_stats("tottime").print_stats(top)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Profile one benchmark case.")
    parser.add_argument("--clusters", type=int, default=100)
    parser.add_argument("--existing", type=int, default=1000)
    parser.add_argument("--new", type=int, default=100)
    parser.add_argument("--shape", choices=[s.value for s in Shape], default=Shape.STANDALONE.value)
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args(argv)
    c = case(Size(clusters=args.clusters, existing=args.existing, new=args.new), Shape(args.shape))
    logging.configure(level=logging.Level.DISABLED)
    runner = FunctionRunner()
    req = c.cold_request()
    _profile(f"schedule() cold, {c.size.label()} {c.shape}", lambda: schedule(*c.cold_args()), args.top)
    _profile(f"RunFunction cold in process, {c.size.label()} {c.shape}",
             lambda: asyncio.run(runner.RunFunction(req, None)), args.top)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
