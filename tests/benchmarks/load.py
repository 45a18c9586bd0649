"""Load: concurrent clients hammer the real gRPC server with realistic ModelDeployment requests.

Run `python -m tests.benchmarks.load` (defaults: 8 clients, 2,000 timed requests, then 10,000 calls
watched for memory). The fleet is 20 clusters x 8 pools with 200 replicas of other deployments;
requests rotate over deployments of every shape, fresh (nothing placed yet) and steady (their
replicas observed). The server is a `modelplane serve --insecure` process; its memory is read
from /proc (VmRSS) after a warm-up and every 1,000 calls. Errors must be 0; memory must be flat.

`drive()` is shared with tests/load, which runs a small in-process version under tracemalloc.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import grpc
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from crossplane.function.proto.v1 import run_function_pb2_grpc as grpcv1
from google.protobuf import json_format

from tests.benchmarks import fleet
from tests.benchmarks.rpc import request, served
from tests.benchmarks.shapes import Shape, deployment

READY = {"conditions": [{"type": "Ready", "status": "True", "reason": "Available"}]}


def requests(
    run: Callable[[fnv1.RunFunctionRequest], fnv1.RunFunctionResponse],
    *,
    clusters: int = 20,
    pools: int = 8,
    existing: int = 200,
    replicas: int = 4,
) -> list[fnv1.RunFunctionRequest]:
    """Fresh and steady-state requests, one pair per shape, against one seeded fleet."""
    f = fleet.generate(clusters=clusters, pools=pools, existing=existing, seed=7)
    out: list[fnv1.RunFunctionRequest] = []
    for shape in Shape:
        xr = deployment(shape, replicas=replicas, name=f"load-{shape.value}")
        fresh = request(xr, observed={}, clusters=f.clusters, replicas=f.replicas, namespace=f.namespace)
        placed = {}
        for key, r in run(fresh).desired.resources.items():
            obj = json_dict(r.resource)
            obj["status"] = READY
            obj["metadata"]["annotations"] = {"crossplane.io/composition-resource-name": key}
            placed[key] = obj
        steady = request(
            xr,
            observed=placed,
            clusters=f.clusters,
            replicas=[*f.replicas, *placed.values()],
            namespace=f.namespace,
        )
        out += [fresh, steady]
    return out


def json_dict(struct: object) -> dict:  # type: ignore[type-arg]

    return json_format.MessageToDict(struct)  # type: ignore[arg-type]


@dataclass
class Stats:
    latencies: list[float] = field(default_factory=list[float])  # seconds, successful calls
    errors: list[str] = field(default_factory=list[str])

    def percentile(self, p: float) -> float:
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))] if ordered else float("nan")


def drive(
    calls: Sequence[Callable[[fnv1.RunFunctionRequest], fnv1.RunFunctionResponse]],
    reqs: Sequence[fnv1.RunFunctionRequest],
    total: int,
) -> Stats:
    """`total` calls spread over one thread per entry of `calls`, rotating through `reqs`."""
    stats = Stats()
    lock = threading.Lock()
    counter = iter(range(total))

    def client(call: Callable[[fnv1.RunFunctionRequest], fnv1.RunFunctionResponse]) -> None:
        while True:
            with lock:
                n = next(counter, None)
            if n is None:
                return
            start = time.perf_counter()
            try:
                rsp = call(reqs[n % len(reqs)])
                bad = [r.message for r in rsp.results if r.severity == fnv1.SEVERITY_FATAL]
            except grpc.RpcError as e:
                bad = [f"{e.code()}: {e.details()}"]  # pyright: ignore[reportAttributeAccessIssue]
            elapsed = time.perf_counter() - start
            with lock:
                if bad:
                    stats.errors.extend(bad)
                else:
                    stats.latencies.append(elapsed)

    threads = [threading.Thread(target=client, args=(c,)) for c in calls]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return stats


def rss_kib(pid: int) -> int:
    """Resident memory of the server and its worker processes (serve composes in children)."""
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    total = 0
    for p in [pid, *map(int, children)]:
        for line in Path(f"/proc/{p}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                total += int(line.split()[1])
    if total == 0:
        msg = f"no VmRSS for pid {pid}"
        raise RuntimeError(msg)
    return total


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.benchmarks.load", description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--requests", type=int, default=2000, help="timed requests (latency figures)")
    ap.add_argument("--soak", type=int, default=10_000, help="calls watched for memory growth")
    args = ap.parse_args(argv)

    with served(max_recv_mib=64) as server:
        channels = [grpc.insecure_channel(server.address) for _ in range(args.clients)]
        try:
            return _run(args, channels, server.pid)
        finally:
            for c in channels:
                c.close()


def _run(args: argparse.Namespace, channels: list[grpc.Channel], pid: int) -> int:
    stubs = [grpcv1.FunctionRunnerServiceStub(c) for c in channels]
    calls = [lambda r, s=s: s.RunFunction(r, timeout=60) for s in stubs]
    reqs = requests(calls[0])
    size = sum(r.ByteSize() for r in reqs) / len(reqs)
    print(f"requests: {len(reqs)} distinct, {size / 1024:.0f} KiB on average; {args.clients} clients")
    drive(calls, reqs, 200)  # warm-up: imports, caches, allocator pools
    t0 = time.perf_counter()
    timed = drive(calls, reqs, args.requests)
    wall = time.perf_counter() - t0
    print(
        f"latency over {args.requests} requests: p50 {timed.percentile(50) * 1e3:.1f} ms, "
        f"p99 {timed.percentile(99) * 1e3:.1f} ms, mean {statistics.fmean(timed.latencies) * 1e3:.1f} ms; "
        f"{args.requests / wall:.0f} req/s; errors {len(timed.errors)}"
    )
    base = rss_kib(pid)
    marks = [base]
    errors = len(timed.errors)
    step = 1000
    for _ in range(args.soak // step):
        errors += len(drive(calls, reqs, step).errors)
        marks.append(rss_kib(pid))
    half = len(marks) // 2
    print(f"server + worker RSS (MiB) every {step} calls: " + " ".join(f"{m / 1024:.1f}" for m in marks))
    print(
        f"memory over {args.soak} calls: {base / 1024:.1f} -> {marks[-1] / 1024:.1f} MiB "
        f"({(marks[-1] - base) / 1024:+.1f}); second half {(marks[-1] - marks[half]) / 1024:+.1f} MiB; "
        f"errors {errors}"
    )
    for e in sorted(set(timed.errors))[:5]:
        print(f"error: {e}")
    return 0 if errors == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
