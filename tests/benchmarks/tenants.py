"""Figures: what one heavy tenant costs the others on a `modelplane serve` of two workers.

`python -m tests.benchmarks.tenants` floods the server with 16 concurrent heavy calls (a
ModelDeployment of 100 replicas over the benchmark's 1,000-cluster fleet: 9 MiB, ~0.5 s of a
worker) for `--seconds`, while one other tenant sends light calls (2 replicas over 2 clusters)
one after another. It prints the light calls' latency (median, p95, worst) and the heavy calls'
throughput and latency, next to each kind alone. Figures, not assertions: tests/load asserts the
order of answers.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
from collections.abc import Sequence

from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from tests.benchmarks.cases import Size, case
from tests.benchmarks.rpc import Client, recv_limit_mib, served
from tests.function.factories import cluster, deployment, request, resolved


def light() -> fnv1.RunFunctionRequest:
    return request(deployment(replicas=2), required=resolved(clusters=[cluster("a"), cluster("b")]))


def _ms(xs: Sequence[float]) -> str:
    ordered = sorted(xs)
    p95 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]
    return f"median {statistics.median(ordered) * 1e3:.0f} ms, p95 {p95 * 1e3:.0f} ms, worst {ordered[-1] * 1e3:.0f} ms"


def _timed(client: Client, req: fnv1.RunFunctionRequest) -> float:
    started = time.perf_counter()
    client.run(req)
    return time.perf_counter() - started


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.benchmarks.tenants", description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--seconds", type=float, default=20.0, help="how long the flood lasts (default 20)")
    ap.add_argument("--heavy-clients", type=int, default=16)
    args = ap.parse_args(argv)
    print("building the heavy request...", file=sys.stderr)
    heavy = case(Size(clusters=1000, existing=0, new=100)).cold_request()
    with served(recv_limit_mib(heavy.ByteSize())) as server:
        client = server.client
        client.run(heavy)  # warm both workers' caches: the figures are of a running server
        client.run(heavy)
        alone_light = [_timed(client, light()) for _ in range(20)]
        alone_heavy = [_timed(client, heavy) for _ in range(5)]
        print(f"alone: light {_ms(alone_light)}; heavy {_ms(alone_heavy)}")
        stop = time.monotonic() + args.seconds
        heavy_times: list[float] = []
        lock = threading.Lock()

        def flood() -> None:
            own = Client(server.address)
            try:
                while time.monotonic() < stop:
                    took = _timed(own, heavy)
                    with lock:
                        heavy_times.append(took)
            finally:
                own.close()

        threads = [threading.Thread(target=flood) for _ in range(args.heavy_clients)]
        for t in threads:
            t.start()
        time.sleep(1.0)  # the heavy calls fill the queue
        during: list[float] = []
        while time.monotonic() < stop:
            during.append(_timed(client, light()))
        for t in threads:
            t.join()
        print(
            f"{args.heavy_clients} heavy clients for {args.seconds:g} s: light {_ms(during)} ({len(during)} calls); "
            f"heavy {len(heavy_times) / (args.seconds + 0.0):.2f} calls/s, {_ms(heavy_times)}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
