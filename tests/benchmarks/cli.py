"""The command users run, timed whole: `modelplane render --no-recurse` over a fleet's YAML files.

Each size's fleet (the benchmark's seeded fleet: C clusters x 8 pools, E existing replicas of
other deployments, a deployment asking for R replicas) is written as the files a user would pass:
the ModelDeployment, and every InferenceCluster, ModelReplica and the Namespace as required
resources. The command runs as a fresh process, stdout to a file, so the figure includes
interpreter start, imports, YAML reading, the function over gRPC and writing the output.

Usage: python -m tests.benchmarks.cli [--quick] [--runs N]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from tests.benchmarks.cases import POOLS, SEED, Size
from tests.benchmarks.fleet import generate
from tests.benchmarks.rpc import modelplane_command
from tests.benchmarks.shapes import Shape, deployment

SIZES = (Size(clusters=100, existing=1000, new=100), Size(clusters=1000, existing=10000, new=100))
TARGETS = {SIZES[0]: 1.5, SIZES[1]: 6.0}  # seconds, whole process


@dataclass(frozen=True, slots=True, kw_only=True)
class Run:
    size: Size
    input_bytes: int
    output_bytes: int
    median: float
    runs: tuple[float, ...]
    cpu: float  # median user + system CPU seconds of the process: what a busy machine does not inflate


def write_inputs(size: Size, directory: Path) -> tuple[Path, Path]:
    fleet = generate(clusters=size.clusters, pools=POOLS, existing=size.existing, seed=SEED)
    xr = directory / "xr.yaml"
    xr.write_text(yaml.safe_dump(deployment(Shape.STANDALONE, replicas=size.new)))
    required = directory / "required-resources.yaml"
    docs = [*fleet.clusters, *fleet.replicas, fleet.namespace]
    required.write_text(yaml.dump_all(docs, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper)))
    return xr, required


def time_render(size: Size, runs: int) -> Run:
    with tempfile.TemporaryDirectory() as tmp:
        xr, required = write_inputs(size, Path(tmp))
        out = Path(tmp) / "out.yaml"
        cmd = [*modelplane_command(), "render", str(xr), "-e", str(required), "--no-recurse", "--allow-partial"]
        times: list[float] = []
        cpu: list[float] = []
        for _ in range(runs):
            with out.open("w") as stdout:
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                start = time.perf_counter()
                subprocess.run(cmd, stdout=stdout, stderr=subprocess.PIPE, check=True, timeout=600)
                times.append(time.perf_counter() - start)
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        return Run(
            size=size,
            input_bytes=required.stat().st_size + xr.stat().st_size,
            output_bytes=out.stat().st_size,
            median=statistics.median(times),
            runs=tuple(times),
            cpu=statistics.median(cpu),
        )


def print_runs(results: Sequence[Run]) -> bool:
    print("\n`modelplane render --no-recurse` as a fresh process (s, median of the runs; all runs listed):")
    ok = True
    for r in results:
        target = TARGETS.get(r.size)
        verdict = "" if target is None else f"  target {target:.1f} s  {'PASS' if r.median <= target else 'FAIL'}"
        ok &= target is None or r.median <= target
        runs = " ".join(f"{t:.2f}" for t in r.runs)
        print(
            f"  {r.size.label():<22} input {r.input_bytes / 2**20:6.1f} MiB  output {r.output_bytes / 2**20:5.2f} MiB"
            f"  median {r.median:6.2f}  ({runs})  cpu {r.cpu:6.2f}{verdict}"
        )
    return ok


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="only the 100-cluster fleet")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)
    sizes = SIZES[:1] if args.quick else SIZES
    print_runs([time_render(s, args.runs) for s in sizes])
    return 0


if __name__ == "__main__":
    sys.exit(main())
