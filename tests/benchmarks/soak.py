"""Soak: a churn of unique clusters, then a storm of cancelled calls; every worker must stay within its bound.

`python -m tests.benchmarks.soak` runs `modelplane serve --workers 2` through two phases:
1. churn (default 180 s): two clients send ModelDeployment calls whose 20 InferenceClusters and
   50 other ModelReplicas are all new (new names, 200-character device attributes, selectors no
   call used), so every cache a request can fill keeps filling and evicting;
2. storm (default 60 s): the churn goes on while two clients send 1,024-replica calls over 1,000
   clusters and cancel them after 50-300 ms.
All along, a light client sends a small deployment every 0.2 s. Every second the soak reads
each worker's resident memory (VmRSS) from /proc. Per phase it prints the calls, the light
calls' latency, the workers started, and the largest worker's RSS per minute and at its peak,
against BOUND_MIB (the documented bound: the interpreter, the caches' budgets and the request
in hand); the exit code is 1 when a worker went past it.
"""

from __future__ import annotations

import argparse
import itertools
import math
import random
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import grpc
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from crossplane.function.proto.v1 import run_function_pb2_grpc as grpcv1

from tests.benchmarks.rpc import _free_port, modelplane_command
from tests.function.factories import cluster, deployment, request, resolved
from tests.function.wants import replica

BOUND_MIB = 512
_unique = itertools.count()


def _churned_cluster(name: str, tag: int) -> dict[str, Any]:
    obj = cluster(name, nodes=4)
    template = obj["spec"].pop("nodePools")[0]
    device = template["devices"][0]
    obj["status"] = {
        "gpuPools": [
            {
                **template,
                "name": f"p{j}",
                "devices": [
                    {
                        **device,
                        "name": f"d{k}",
                        "attributes": {
                            **device["attributes"],
                            **{f"a{a}": {"string": f"{tag}-{j}-{k}-{a}-".ljust(200, "v")} for a in range(8)},
                        },
                    }
                    for k in range(2)
                ],
            }
            for j in range(4)
        ]
    }
    return obj


def churn_request() -> fnv1.RunFunctionRequest:
    tag = next(_unique)
    clusters = [_churned_cluster(f"c{tag}-{i}", tag) for i in range(20)]
    others = []
    for i in range(50):
        obj = replica(f"c{tag}-{i % 20}", i, deployment=f"other-{tag}", cel=f'device.driver == "{tag}-{i}"')
        others.append(obj)
    return request(deployment(replicas=4), required=resolved(clusters=clusters, replicas=others))


def storm_request() -> fnv1.RunFunctionRequest:
    tag = next(_unique)
    clusters = [cluster(f"s{tag}-{i}", nodes=2, labels={"region": "eu", "n": str(i)}) for i in range(1000)]
    return request(deployment(replicas=1024), required=resolved(clusters=clusters))


def light_request() -> fnv1.RunFunctionRequest:
    return request(deployment(replicas=2), required=resolved(clusters=[cluster("a"), cluster("b")]))


def _rss_mib(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def _workers(server: int) -> list[int]:
    try:
        return [int(p) for p in Path(f"/proc/{server}/task/{server}/children").read_text().split()]
    except OSError:
        return []


class Soak:
    def __init__(self, address: str) -> None:
        self.channel = grpc.insecure_channel(address, options=[("grpc.max_send_message_length", 64 << 20)])
        self.stub = grpcv1.FunctionRunnerServiceStub(self.channel)
        self.stop = 0.0
        self.storming = False
        self.counts: dict[str, int] = {}
        self.light: list[float] = []
        self.lock = threading.Lock()

    def _count(self, what: str) -> None:
        with self.lock:
            self.counts[what] = self.counts.get(what, 0) + 1

    def churn(self) -> None:
        while time.monotonic() < self.stop:
            req = churn_request()
            try:
                self.stub.RunFunction(req, timeout=60)
                self._count("churn calls")
            except grpc.RpcError:
                self._count("churn errors")

    def storm(self, seed: int) -> None:
        rng = random.Random(seed)
        reqs = [storm_request() for _ in range(3)]
        while time.monotonic() < self.stop:
            try:
                self.stub.RunFunction(rng.choice(reqs), timeout=rng.uniform(0.05, 0.3))
                self._count("storm calls answered")
            except grpc.RpcError:
                self._count("storm calls cancelled")

    def probe(self) -> None:
        req = light_request()
        while time.monotonic() < self.stop:
            started = time.perf_counter()
            try:
                self.stub.RunFunction(req, timeout=60)
                with self.lock:
                    self.light.append(time.perf_counter() - started)
            except grpc.RpcError:
                self._count("light errors")
            time.sleep(0.2)


def phase(soak: Soak, server: int, name: str, seconds: float, *, storm: bool) -> float:
    """Run one phase; print its figures; return the largest worker RSS seen."""
    soak.stop = time.monotonic() + seconds
    soak.counts, soak.light = {}, []
    targets: list[tuple[Any, tuple[int, ...]]] = [(soak.churn, ()), (soak.churn, ()), (soak.probe, ())]
    if storm:
        targets += [(soak.storm, (1,)), (soak.storm, (2,))]
    threads = [threading.Thread(target=t, args=a) for t, a in targets]
    for t in threads:
        t.start()
    peaks: dict[int, float] = {}
    samples: list[tuple[float, float]] = []  # (seconds in, the largest worker's RSS)
    started = time.monotonic()
    while any(t.is_alive() for t in threads):
        now = {pid: _rss_mib(pid) for pid in _workers(server)}
        for pid, rss in now.items():
            peaks[pid] = max(peaks.get(pid, 0.0), rss)
        samples.append((time.monotonic() - started, max(now.values(), default=0.0)))
        time.sleep(1.0)
    for t in threads:
        t.join()
    per_minute = [
        max((rss for t, rss in samples if m * 60 <= t < (m + 1) * 60), default=0.0)
        for m in range(max(1, math.ceil(seconds / 60)))
    ]
    peak = max(peaks.values(), default=0.0)
    light = sorted(soak.light)
    print(f"{name} ({seconds:g} s): {dict(sorted(soak.counts.items()))}")
    print(
        f"  light calls: {len(light)}, median {statistics.median(light) * 1e3:.0f} ms, "
        f"p95 {light[int(len(light) * 0.95)] * 1e3:.0f} ms, worst {light[-1] * 1e3:.0f} ms"
    )
    print(f"  workers seen: {len(peaks)}")
    print(
        f"  largest worker RSS per minute: {', '.join(f'{x:.0f}' for x in per_minute)} MiB; "
        f"peak {peak:.0f} MiB (bound {BOUND_MIB} MiB)"
    )
    return peak


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.benchmarks.soak", description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--seconds", type=float, default=180.0, help="the churn phase (default 180)")
    ap.add_argument("--storm-seconds", type=float, default=60.0, help="the cancel storm phase (default 60)")
    args = ap.parse_args(argv)
    port = _free_port()
    cmd = [*modelplane_command(), "serve", "--insecure", f"--address=127.0.0.1:{port}", "--max-recv-message-size=64"]
    server = subprocess.Popen([*cmd, "--workers=2"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        grpc.channel_ready_future(grpc.insecure_channel(f"127.0.0.1:{port}")).result(timeout=60)
        soak = Soak(f"127.0.0.1:{port}")
        peak = phase(soak, server.pid, "churn", args.seconds, storm=False)
        peak = max(peak, phase(soak, server.pid, "churn + cancel storm", args.storm_seconds, storm=True))
        return 0 if peak <= BOUND_MIB else 1
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    sys.exit(main())
