"""Figures: what other tenants' demand costs one deployment's call, however much of it there is.

`python -m tests.benchmarks.blocked` serves the function (`modelplane serve`, real gRPC) and
times one deployment's RunFunction on the C=100 x 8 pools fleet with 1,000 existing replicas,
given N ModelDemands of other deployments (N = 0, 500, 2,000), for a cold call (100 replicas to
place) and a steady one (all placed and Ready). Half the others are blocked on the very pools the
deployment's replicas hold (each replica needs a whole 64-node pool, and every such pool holds
replicas already, so the move search examines them), half are larger deployments that lack
replicas and fit (so room is played out for them). It prints median and p95 per N and the ratio against N = 0 in
the same run: the fleet rules bound their work per call, so the ratio stays under 2 however many
deployments are blocked (scheduler/reserve.py, scheduler/displace.py).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Sequence
from typing import Any

from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane import api
from modelplane.model import PoolCharge
from modelplane.stated import StatedDemand, StatedEngine, StatedOption, pool_kind

from tests.benchmarks import rpc
from tests.benchmarks.cases import Case, Size, case

SIZE = Size(clusters=100, existing=1000, new=100)
COUNTS = (0, 500, 2000)
TARGET = 2.0


def others(c: Case, count: int) -> list[dict[str, Any]]:
    """`count` ModelDemands of other deployments, on the pool kinds the deployment's own replicas hold."""
    by_cluster = {cl.name: cl for cl in c.world.clusters}
    held = sorted(
        {
            pool_kind(next(p for p in by_cluster[r.cluster].pools if p.name == pool))
            for r in c.own
            for pool in r.node_cost_by_pool()
        }
    )
    clusters = tuple(sorted({r.cluster for r in c.own}))
    out: list[dict[str, Any]] = []
    for i in range(count):
        nodes = 64 if i % 2 == 0 else 1  # 64 nodes: a whole pool of the largest size, none of them empty
        options = tuple(
            StatedOption(kind=kind, cost=nodes, charge=PoolCharge(nodes=nodes), claimed=8 * nodes) for kind in held[:4]
        )
        stated = StatedDemand(
            namespace=f"tenant-{i % 200:03d}",
            name=f"demand-{i:05d}",
            replicas=4,
            devices=64,  # ranked ahead of the deployment: larger replicas
            clusters=clusters[: 5 + i % 20],
            engines=(StatedEngine(name="main", options=options),),
        )
        out.append(api.demand_manifest(stated))
    return out


def _request(c: Case, demands: Sequence[dict[str, Any]], *, steady: bool) -> fnv1.RunFunctionRequest:
    fleet = c.world.fleet
    return rpc.request(
        c.xr,
        observed=c.own_wire if steady else {},
        clusters=fleet.clusters,
        replicas=[*fleet.replicas, *c.own_wire.values()] if steady else fleet.replicas,
        namespace=fleet.namespace,
        demands=demands,
    )


def _times(client: rpc.Client, req: fnv1.RunFunctionRequest, runs: int) -> list[float]:
    client.run(req)  # the memo and the selector results warm, as on a running server
    out: list[float] = []
    for _ in range(runs):
        started = time.perf_counter()
        client.run(req)
        out.append(time.perf_counter() - started)
    return sorted(out)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.benchmarks.blocked", description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--runs", type=int, default=15)
    args = ap.parse_args(argv)
    c = case(SIZE)
    requests = {(n, steady): _request(c, others(c, n), steady=steady) for n in COUNTS for steady in (False, True)}
    biggest = max(r.ByteSize() for r in requests.values())
    print(f"Other tenants' demand, one deployment's RunFunction at {SIZE.label()} (ms, median / p95):")
    print(f"  {'statements':>10}  {'request':>9}  {'cold':>13}  {'ratio':>5}  {'steady':>13}  {'ratio':>5}")
    ok = True
    with rpc.served(rpc.recv_limit_mib(biggest)) as server:
        base: dict[bool, float] = {}
        for n in COUNTS:
            cells: list[str] = []
            for steady in (False, True):
                times = _times(server.client, requests[(n, steady)], args.runs)
                median = statistics.median(times)
                base.setdefault(steady, median)
                ratio = median / base[steady]
                ok &= ratio <= TARGET
                p95 = times[min(len(times) - 1, int(len(times) * 0.95))]
                cells.append(f"{median * 1e3:6.1f} / {p95 * 1e3:5.1f}  {ratio:5.2f}")
            size = requests[(n, False)].ByteSize() / rpc.MIB
            print(f"  {n:>10}  {size:>6.2f} MiB  {cells[0]}  {cells[1]}")
    print(f"  target: at most {TARGET:.0f}x the call with none, {'met' if ok else 'MISSED'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
