"""Figures: the memory and time one request can take, for the largest requests the XRDs allow.

`python -m tests.benchmarks.worst_request` sends each request to a fresh worker process of the
function (as `modelplane serve` runs them) and prints the worker's peak resident memory (VmHWM),
the time to the answer and the answer's outcome. The API server stores no object over 1.5 MiB
(etcd's request limit), and the XRDs allow 1,024 replicas: every case is a 1.4 MiB object, its
bytes in one arg, in the most env vars, or in the most args, composed into 1,024 ModelReplicas or
one, or rendered as one ModelReplica. An answer near the 4 MiB limit is there too (1,024 replicas
of ~3.7 KiB each), and for scale the benchmark's largest fleet, which no XRD bounds. Figures, not
assertions: tests/reliability/test_amplification.py asserts.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from crossplane.function import logging
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane_function.server.fn import FunctionRunner

from tests.benchmarks.cases import Size, case
from tests.function.factories import cluster, deployment, request, resolved, with_ready
from tests.function.factories import replica_resolved as replica_answers
from tests.function.wants import replica

MIB = 2**20
OBJECT_BYTES = int(1.4 * MIB)  # under the 1.5 MiB etcd stores, with room for the rest of the object


def _container(obj: dict[str, Any]) -> dict[str, Any]:
    if obj["kind"] == "ModelDeployment":
        return obj["spec"]["template"]["spec"]["engines"][0]["members"][0]["template"]["spec"]["containers"][0]
    return obj["spec"]["engines"][0]["members"][0]["template"]["spec"]["containers"][0]


def _filled(obj: dict[str, Any], shape: str, total: int) -> dict[str, Any]:
    """`obj` with `total` bytes in its engine container, as one arg, 128 env values or 256 args."""
    c = _container(obj)
    if shape == "arg":
        c["args"] = ["--x=" + "a" * total]
    elif shape == "env":
        c["env"] = [{"name": f"V{i}", "value": "a" * (total // 128)} for i in range(128)]
    else:
        c["args"] = [f"--x{i}=" + "a" * (total // 256) for i in range(256)]
    return obj


def cases() -> dict[str, fnv1.RunFunctionRequest]:
    fleet = resolved(clusters=[cluster("a", nodes=1100, gpus_per_node=1)])
    out: dict[str, fnv1.RunFunctionRequest] = {}
    for shape in ("arg", "env", "args"):
        out[f"ModelDeployment, 1,024 replicas, 1.4 MiB in {shape}"] = request(
            _filled(deployment(replicas=1024), shape, OBJECT_BYTES), required=fleet
        )
    out["ModelDeployment, 1 replica, 1.4 MiB in arg"] = request(
        _filled(deployment(replicas=1), "arg", OBJECT_BYTES), required=fleet
    )
    out["ModelDeployment, 1,024 replicas, an answer near the limit"] = request(
        _filled(deployment(replicas=1024), "arg", 2600), required=fleet
    )
    # No XRD bounds a fleet; the benchmark's largest, for scale.
    out["ModelDeployment, 100 replicas over 1,000 clusters and 10,000 replicas"] = case(
        Size(clusters=1000, existing=10_000, new=100)
    ).cold_request()
    for shape in ("arg", "env", "args"):
        out[f"ModelReplica, 1.4 MiB in {shape}"] = request(
            with_ready(_filled(replica("a"), shape, OBJECT_BYTES)), required=replica_answers()
        )
    return out


def peak_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _outcome(rsp: fnv1.RunFunctionResponse) -> str:
    fatal = [r.message for r in rsp.results if r.severity == fnv1.SEVERITY_FATAL]
    if fatal:
        return f"FATAL {fatal[0][:60]}"
    reasons = [c.reason for c in rsp.conditions if c.status == fnv1.STATUS_CONDITION_FALSE]
    composed = f"{len(rsp.desired.resources)} composed, {rsp.ByteSize() / MIB:.2f} MiB"
    return composed + (f", {', '.join(reasons)}" if reasons else "")


async def measure(req: fnv1.RunFunctionRequest) -> tuple[float, float, float, str]:
    """(worker peak MiB before, after, seconds, outcome) of one request on a fresh worker."""
    runner = FunctionRunner(workers=1, deadline=300)
    await runner.start()
    assert runner.pool is not None
    (pid,) = runner.pool.pids
    before = peak_mib(pid)
    started = time.perf_counter()
    rsp = fnv1.RunFunctionResponse.FromString(await runner.run(req.SerializeToString()))
    took = time.perf_counter() - started
    after = peak_mib(pid)
    await runner.close()
    return before, after, took, _outcome(rsp)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m tests.benchmarks.worst_request", description=(__doc__ or "").splitlines()[0]
    )
    ap.parse_args(argv)
    logging.configure(level=logging.Level.DISABLED)
    print("| request | request MiB | worker peak RSS (idle) | time | answer |")
    print("| --- | --- | --- | --- | --- |")
    for name, req in cases().items():
        before, after, took, outcome = asyncio.run(measure(req))
        print(
            f"| {name} | {req.ByteSize() / MIB:.2f} | {after:.0f} MiB ({before:.0f}) | {took * 1e3:.0f} ms | {outcome} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
