"""`make bench`: how schedule() and RunFunction scale with the fleet, against design.md §7.

For each size (C clusters x 8 pools, E existing replicas of other deployments, R new replicas)
it prints the median and p95 wall time of schedule() alone (cold: nothing placed yet; steady:
everything placed and observed, so all of it is retained) and of one RunFunction round trip over
real gRPC to a `modelplane serve` process (cold and steady, Struct conversion and parsing
included), the work counters of one cold schedule() call, growth exponents between sizes,
the three deployment shapes at the target size, the request sizes against the 4 MiB gRPC default,
peak memory of the largest case, the §7 targets with a verdict, and the whole `modelplane render`
command as users run it (a fresh process over YAML files, see cli.py) against its targets.

Usage: python -m tests.benchmarks.bench [--quick] [--no-rpc] [--strict]
"""

from __future__ import annotations

import argparse
import gc
import itertools
import math
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from modelplane.scheduler import schedule

from tests.benchmarks import cli, rpc
from tests.benchmarks.cases import GRID, POOLS, QUICK, SEED, Case, Size, case
from tests.benchmarks.counting import Counts, counted, distinct_pairs, naive_evaluations
from tests.benchmarks.memory import peak_memory
from tests.benchmarks.shapes import Shape
from tests.benchmarks.timing import Timing, measure


@dataclass(frozen=True, slots=True, kw_only=True)
class Row:
    size: Size
    cold: Timing
    steady: Timing
    counts: Counts
    pairs: int
    naive: int
    request_bytes: int
    limit_mib: int
    rpc_cold: Timing | None
    rpc_steady: Timing | None


def _counts(c: Case) -> Counts:
    with counted() as read:
        schedule(*c.cold_args())
        return read()


def _rpc(c: Case, budget: float) -> tuple[int, int, Timing, Timing]:
    cold_req, steady_req = c.cold_request(), c.steady_request()
    size = max(cold_req.ByteSize(), steady_req.ByteSize())
    limit = rpc.recv_limit_mib(size)
    with rpc.serving(limit) as client:
        cold = measure(lambda: client.run(cold_req), budget=budget)
        steady = measure(lambda: client.run(steady_req), budget=budget)
    return size, limit, cold, steady


def run_row(size: Size, *, with_rpc: bool, shape: Shape = Shape.STANDALONE) -> Row:
    c = case(size, shape)
    # The benchmark holds whole fleets (millions of objects) that the code under test never would;
    # freezing them keeps full GC passes over them out of the timings.
    gc.collect()
    gc.freeze()
    budget = 1.0 if size.clusters < 1000 else 3.0
    cold = measure(lambda: schedule(*c.cold_args()), budget=budget)
    steady = measure(lambda: schedule(*c.steady_args()), budget=budget)
    size_bytes, limit, rpc_cold, rpc_steady = _rpc(c, budget) if with_rpc else (0, 0, None, None)
    return Row(
        size=size,
        cold=cold,
        steady=steady,
        counts=_counts(c),
        pairs=distinct_pairs(c.deployment, c.world.clusters),
        naive=naive_evaluations(c.deployment, c.world.clusters, size.new),
        request_bytes=size_bytes,
        limit_mib=limit,
        rpc_cold=rpc_cold,
        rpc_steady=rpc_steady,
    )


def _opt(t: Timing | None) -> str:
    return t.ms() if t is not None else f"{'-':>8} {'-':>8}"


def _mib(n: int) -> str:
    return f"{n / rpc.MIB:>7.2f}" if n else f"{'-':>7}"


def _first(t: Timing | None) -> str:
    return f"{t.first * 1000:8.1f}" if t is not None else f"{'-':>8}"


def print_table(rows: Sequence[Row]) -> None:
    print("Wall time in ms (median p95). cold = nothing of the deployment placed yet; steady = all R placed and")
    print("observed (everything retained). sched = schedule() on parsed inputs; rpc = one RunFunction round trip")
    print("over gRPC to `modelplane serve`; 'rpc 1st' = the first (cold) call a freshly started server answers.")
    print("Counts are of one cold schedule() call; pairs = distinct (device content, selector) pairs.")
    print(
        f"{'size':<22} {'sched cold':>17} {'sched steady':>17} {'rpc 1st':>8} {'rpc cold':>17} {'rpc steady':>17}"
        f" {'CEL':>5} {'pairs':>5} {'naive':>9} {'engine opts':>11} {'verdicts':>8} {'fits':>5} {'req MiB':>7}"
    )
    for r in rows:
        n = r.counts
        print(
            f"{r.size.label():<22} {r.cold.ms()} {r.steady.ms()} {_first(r.rpc_cold)} {_opt(r.rpc_cold)} {_opt(r.rpc_steady)}"
            f" {n.cel_evaluations:>5} {r.pairs:>5} {r.naive:>9} {n.engine_candidates:>11} {n.cluster_verdicts:>8}"
            f" {n.fit_searches:>5} {_mib(r.request_bytes)}"
        )


def _exponent(a: float, b: float, x: float, y: float) -> str:
    if a <= 0 or b <= 0 or x == y:
        return "  n/a"
    return f"{math.log(b / a) / math.log(y / x):5.2f}"


_SERIES: tuple[tuple[str, Callable[[Size], float], tuple[Size, ...]], ...] = (
    ("clusters C (E=0, R=100)", lambda s: s.clusters, tuple(s for s in GRID if s.existing == 0 and s.new == 100)),
    (
        "existing E (C=1000, R=100)",
        lambda s: s.existing,
        tuple(s for s in GRID if s.clusters == 1000 and s.new == 100 and s.existing),
    ),
    ("new R (C=100, E=1000)", lambda s: s.new, tuple(s for s in GRID if s.clusters == 100 and s.existing == 1000)),
    ("new R (C=1000, E=10000)", lambda s: s.new, tuple(s for s in GRID if s.existing == 10000)),
)


def print_exponents(rows: Sequence[Row]) -> None:
    print("\nGrowth exponents k in time ~ size^k (log ratio of median times over log ratio of sizes):")
    by_size = {r.size: r for r in rows}
    metrics: tuple[tuple[str, Callable[[Row], float]], ...] = (
        ("sched cold", lambda r: r.cold.median),
        ("sched steady", lambda r: r.steady.median),
        ("rpc cold", lambda r: r.rpc_cold.median if r.rpc_cold else 0.0),
        ("rpc steady", lambda r: r.rpc_steady.median if r.rpc_steady else 0.0),
    )
    for title, axis, sizes in _SERIES:
        present = [s for s in sizes if s in by_size]
        for lo, hi in itertools.pairwise(present):
            a, b = by_size[lo], by_size[hi]
            ks = "  ".join(f"{name} {_exponent(m(a), m(b), axis(lo), axis(hi))}" for name, m in metrics)
            print(f"  {title:<27} {axis(lo):>6} -> {axis(hi):<6} {ks}")


def print_shapes(size: Size, *, with_rpc: bool) -> list[Row]:
    print(f"\nDeployment shapes at {size.label()} (ms, median p95):")
    rows = [run_row(size, with_rpc=with_rpc, shape=shape) for shape in Shape]
    for shape, r in zip(Shape, rows, strict=True):
        print(
            f"  {shape.value:<15} sched cold {r.cold.ms()}  sched steady {r.steady.ms()}  rpc cold {_opt(r.rpc_cold)}"
            f"  CEL {r.counts.cel_evaluations} <= pairs {r.pairs} (naive {r.naive})"
        )
    return rows


def print_ratios(rows: Sequence[Row]) -> None:
    """Baselines: what the edge adds to schedule(), what retention saves, what memoised CEL saves."""
    print("\nRatios (medians): rpc cold / sched cold = cost of the gRPC edge; naive / CEL = saved by memoised CEL")
    for r in rows:
        edge = f"{r.rpc_cold.median / r.cold.median:6.1f}x" if r.rpc_cold and r.cold.median > 0 else f"{'-':>7}"
        saved = r.naive / r.counts.cel_evaluations if r.counts.cel_evaluations else 0.0
        print(
            f"  {r.size.label():<22} rpc/sched {edge}  steady/cold {r.steady.median / r.cold.median:5.2f}"
            f"  naive/CEL {saved:9.0f}x"
        )


def _verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def print_targets(rows: Sequence[Row], shapes: Sequence[Row]) -> bool:
    by_size = {r.size: r for r in rows}
    print("\nTargets (design.md §7), medians:")
    ok = True
    checks: list[tuple[str, Row | None, Callable[[Row], float], float]] = [
        ("cold placement R=100 over C=100 x 8 pools", by_size.get(Size(clusters=100, existing=0, new=100)),
         lambda r: r.cold.median, 0.100),
        ("RunFunction C=100, E=1000 (cold, R=100)", by_size.get(Size(clusters=100, existing=1000, new=100)),
         lambda r: r.rpc_cold.median if r.rpc_cold else math.inf, 0.300),
        ("RunFunction C=100, E=1000 (steady, R=100)", by_size.get(Size(clusters=100, existing=1000, new=100)),
         lambda r: r.rpc_steady.median if r.rpc_steady else math.inf, 0.300),
        ("end to end C=1000, E=10000 (cold, R=100)", by_size.get(Size(clusters=1000, existing=10000, new=100)),
         lambda r: r.rpc_cold.median if r.rpc_cold else math.inf, 2.0),
        ("  the same, first call of a fresh server", by_size.get(Size(clusters=1000, existing=10000, new=100)),
         lambda r: r.rpc_cold.first if r.rpc_cold else math.inf, 2.0),
    ]  # fmt: skip
    for label, row, metric, limit in checks:
        if row is None or (metric(row) == math.inf):
            print(f"  {label:<45} not measured")
            continue
        value = metric(row)
        ok &= value <= limit
        print(f"  {label:<45} {value * 1000:8.1f} ms <= {limit * 1000:6.0f} ms  {_verdict(value <= limit)}")
    bounded = all(r.counts.cel_evaluations <= r.pairs for r in [*rows, *shapes])
    ok &= bounded
    print(
        f"  {'CEL evaluations <= distinct (device, selector) pairs':<45} {'every case':>11}        {_verdict(bounded)}"
    )
    return ok


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="only fleets of up to 100 clusters")
    parser.add_argument("--no-rpc", action="store_true", help="skip the gRPC round trips")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    args = parser.parse_args(argv)
    grid = QUICK if args.quick else GRID
    with_rpc = not args.no_rpc
    print(f"modelplane benchmark: {POOLS} pools per cluster, seed {SEED}, Python {sys.version.split()[0]}\n")
    rows: list[Row] = []
    for size in grid:
        rows.append(run_row(size, with_rpc=with_rpc))
        print(f"  measured {size.label()}", file=sys.stderr, flush=True)
    print_table(rows)
    print_exponents(rows)
    print_ratios(rows)
    shapes = print_shapes(Size(clusters=100, existing=1000, new=100), with_rpc=with_rpc)
    largest = grid[-1]
    if with_rpc:
        big = next(r for r in rows if r.size == largest)
        over = big.request_bytes > rpc.DEFAULT_LIMIT_MIB * rpc.MIB
        print(
            f"\nLargest request ({largest.label()}): {big.request_bytes / rpc.MIB:.1f} MiB"
            + (
                f", over grpc's {rpc.DEFAULT_LIMIT_MIB} MiB default receive limit: served with"
                f" `modelplane serve --max-recv-message-size {big.limit_mib}`."
                if over
                else f", within the {rpc.DEFAULT_LIMIT_MIB} MiB default."
            )
        )
    print(f"\nPeak memory (tracemalloc) at {largest.label()}:")
    for label, mib in peak_memory(case(largest)):
        print(f"  {label:<45} {mib:8.1f} MiB")
    ok = print_targets(rows, shapes)
    if with_rpc:
        sizes = cli.SIZES[:1] if args.quick else cli.SIZES
        ok &= cli.print_runs([cli.time_render(s, runs=3) for s in sizes])
    return 1 if args.strict and not ok else 0


if __name__ == "__main__":
    sys.exit(main())
