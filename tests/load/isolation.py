"""Figures: does one heavy request stall a light one? And what the worst inputs cost.

`python -m tests.load.isolation` starts `modelplane serve --insecure --workers N` (N = 1, which is
one request at a time as on a single event loop, then 2, the default) and prints, per N: a light
request's latency alone (median of 20), the heavy request alone, and the light request's latency
while the heavy one is being composed (median and worst of the light calls made meanwhile). Heavy
is the largest fleet of the benchmark (1,000 clusters x 8 pools, 10,000 other replicas, 100 new:
22.9 MiB) and a 1,024-replica deployment with 40 env vars (an answer too large to send). Then, on
two workers, the time to refuse each worst input and the memory of the server with its workers.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import grpc
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from crossplane.function.proto.v1 import run_function_pb2_grpc as grpcv1

from tests.benchmarks.cases import Size, case
from tests.benchmarks.rpc import _free_port, modelplane_command
from tests.function.factories import cluster, deployment, request, resolved

Call = Callable[[fnv1.RunFunctionRequest], fnv1.RunFunctionResponse]


@contextmanager
def serve(workers: int) -> Iterator[tuple[Call, int]]:
    """`modelplane serve` with `workers`; a call and the server's pid."""
    port = _free_port()
    cmd = [*modelplane_command(), "serve", "--insecure", f"--address=127.0.0.1:{port}", "--max-recv-message-size=64"]
    log = tempfile.TemporaryFile()  # noqa: SIM115 - closed below
    proc = subprocess.Popen([*cmd, f"--workers={workers}"], stdout=subprocess.DEVNULL, stderr=log)
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    try:
        grpc.channel_ready_future(channel).result(timeout=60)
        stub = grpcv1.FunctionRunnerServiceStub(channel)
        yield (lambda req: stub.RunFunction(req, timeout=120)), proc.pid
    finally:
        channel.close()
        proc.terminate()
        proc.wait(timeout=30)
        log.close()


def rss_mib(pid: int) -> float:
    """Resident memory of a process and its children."""
    pids = [pid, *map(int, Path(f"/proc/{pid}/task/{pid}/children").read_text().split())]
    kib = 0
    for p in pids:
        for line in Path(f"/proc/{p}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                kib += int(line.split()[1])
    return kib / 1024


def timed(call: Call, req: fnv1.RunFunctionRequest) -> float:
    t = time.perf_counter()
    call(req)
    return time.perf_counter() - t


def light() -> fnv1.RunFunctionRequest:
    return request(deployment(replicas=2), required=resolved(clusters=[cluster("a"), cluster("b")]))


def many_replicas() -> fnv1.RunFunctionRequest:
    xr = deployment(replicas=1024)
    env = [{"name": f"VAR_{i}", "value": "x" * 60} for i in range(40)]
    xr["spec"]["template"]["spec"]["engines"][0]["members"][0]["template"]["spec"]["containers"][0]["env"] = env
    return request(xr, required=resolved(clusters=[cluster("a", nodes=1100)]))


def worst() -> dict[str, fnv1.RunFunctionRequest]:
    env = deployment()
    env["spec"]["template"]["spec"]["engines"][0]["members"][0]["template"]["spec"]["containers"][0]["env"] = [
        {"name": f"V{i}"} for i in range(100_000)
    ]
    engines = deployment()
    engines["spec"]["template"]["spec"]["engines"] *= 20_000
    return {
        "spec.replicas 40,000": request(deployment(replicas=40_000), required=resolved(clusters=[cluster("a")])),
        "an env list of 100,000": request(env, required=resolved(clusters=[cluster("a")])),
        "20,000 engines": request(engines, required=resolved(clusters=[cluster("a")])),
        "1,024 replicas x 40 env vars (too large to answer)": many_replicas(),
    }


def stall(call: Call, heavy: fnv1.RunFunctionRequest) -> tuple[float, list[float]]:
    """The heavy request's time, and the light calls' latencies made while it ran."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        started = time.perf_counter()
        future = pool.submit(call, heavy)
        time.sleep(0.05)
        during: list[float] = []
        while not future.done():
            during.append(timed(call, light()))
        future.result()
        return time.perf_counter() - started, during


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.load.isolation", description=(__doc__ or "").splitlines()[0])
    ap.parse_args(argv)
    print("building the heavy requests...", file=sys.stderr)
    heavies = {"largest fleet (22.9 MiB)": case(Size(clusters=1000, existing=10_000, new=100)).cold_request()}
    heavies["1,024 replicas x 40 env vars"] = many_replicas()
    for workers in (1, 2):
        with serve(workers) as (call, _):
            for name, heavy in heavies.items():
                call(heavy)  # warm the caches: the figures are of a running server
                alone = statistics.median(timed(call, light()) for _ in range(20))
                took, during = stall(call, heavy)
                print(
                    f"workers={workers} heavy={name}: light alone {alone * 1e3:.0f} ms; heavy {took:.2f} s; "
                    f"light meanwhile: {len(during)} calls, median {statistics.median(during) * 1e3:.0f} ms, "
                    f"worst {max(during) * 1e3:.0f} ms"
                )
    with serve(2) as (call, pid):
        base = rss_mib(pid)
        for name, req in worst().items():
            print(f"worst input {name}: {req.ByteSize() / 2**20:.1f} MiB, answered in {timed(call, req) * 1e3:.0f} ms")
        for name, heavy in heavies.items():
            print(f"{name}: answered in {timed(call, heavy):.2f} s")
        print(f"server + 2 workers RSS: {base:.0f} MiB at start, {rss_mib(pid):.0f} MiB after the worst inputs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
