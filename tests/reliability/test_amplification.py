"""One request builds no more than the answer it may send (real gRPC, a worker process as `serve` runs it).

Each ModelReplica a deployment composes carries the whole pod template: 1,024 replicas of a 1 MiB
arg built a 1 GiB answer before its size was checked, 3.2 GiB of worker memory and 8 s of a
worker, only to refuse it. The answer is now sized replica by replica and refused as soon as it
cannot fit: the running replica is kept, the condition says why, the worker stays small, and the
answer comes well inside a deadline the old code overran.
"""

from pathlib import Path
from typing import Any

from crossplane.function.proto.v1 import run_function_pb2_grpc as grpcv1

from tests.function.conftest import as_dict, worker_server
from tests.function.factories import cluster, deployment, request, resolved, with_ready
from tests.function.wants import MD_REQUIREMENTS, condition, replica, response, result

PEAK_MIB = 256  # the documented bound on one request's worker memory
TOO_LARGE = (
    "the desired state is about 1025.2 MiB, over the 4.0 MiB a function response may carry (Crossplane's gRPC "
    "receive limit, which no setting raises): the existing replicas are kept and nothing new is composed; lower "
    "spec.replicas or what each replica carries (pod template, env)"
)


def peak_mib(pid: int) -> float:
    """A process's peak resident memory (VmHWM)."""
    line = next(x for x in Path(f"/proc/{pid}/status").read_text().splitlines() if x.startswith("VmHWM:"))
    return int(line.split()[1]) / 1024


def amplified() -> dict[str, Any]:
    """1,024 replicas of a 1 MiB arg: a 1 MiB object, within every limit of the XRD."""
    xr = deployment(replicas=1024)
    container = xr["spec"]["template"]["spec"]["engines"][0]["members"][0]["template"]["spec"]["containers"][0]
    container["args"] = ["--x=" + "a" * 2**20]
    return xr


def test_a_1024_replica_1_mib_deployment_is_refused_at_once_in_little_memory() -> None:
    running = with_ready(replica("a"))
    running["metadata"]["annotations"] = {"crossplane.io/composition-resource-name": "replica-a-0"}
    req = request(
        amplified(),
        observed={"replica-a-0": running},
        required=resolved(clusters=[cluster("a", nodes=1100, gpus_per_node=1)], replicas=[running]),
    )
    # 5 s: the old code took 8 s and more on this request, and would be answered FATAL here.
    with worker_server(workers=1, deadline=5) as (runner, channel):
        got = as_dict(grpcv1.FunctionRunnerServiceStub(channel).RunFunction(req, timeout=60))
        assert runner.pool is not None
        (pid,) = runner.pool.pids
        peak = peak_mib(pid)
    problem = condition("ReplicasScheduled", "False", "ResponseTooLarge", TOO_LARGE)
    want = response(
        status={"replicas": {"total": 1, "ready": 1}},
        resources={"replica-a-0": (replica("a"), True)},
        conditions=[problem, condition("ReplicasReady", "False", "ReplicasNotReady", "1 of 1024 replicas are ready.")],
        results=[result("WARNING", problem["reason"], problem["message"])],
        requirements=MD_REQUIREMENTS,
    )
    assert (got, peak <= PEAK_MIB) == (want, True), f"worker peak {peak:.0f} MiB"
