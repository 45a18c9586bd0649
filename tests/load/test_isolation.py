"""`modelplane serve`'s worker processes: no single request stalls or takes down the others (real gRPC).

A heavy request (1,024 replicas with 30 env vars each, a 4 MiB answer, over 1,000 clusters of 8
pools whose 8,000 devices are all new to the worker: about a second of composing) and a light one
are sent together; with two workers the light answer comes back first. A request past the deadline
is answered FATAL (Crossplane changes nothing) and its worker replaced; a worker killed mid-request
costs only that request; bytes that are not a request are refused and the worker that read them
keeps serving; workers that died while idle are replaced before anyone notices.
Ordering and outcomes are asserted, never durations; tests/load/isolation.py prints the figures.
"""

import itertools
import os
import signal
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

import grpc
import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from crossplane.function.proto.v1 import run_function_pb2_grpc as grpcv1
from modelplane_function.server.fn import FunctionRunner

from tests.function.conftest import as_dict, worker_server
from tests.function.factories import cluster, deployment, request, resolved

METHOD = "/apiextensions.fn.proto.v1.FunctionRunnerService/RunFunction"
ENV = [{"name": f"VAR_{i}", "value": "x" * 60} for i in range(30)]


_calls = itertools.count()


def _fleet_cluster(name: str, serial: str) -> dict[str, Any]:
    """A cluster of 8 pools, each device with a serial no earlier call used: nothing in a worker's caches."""
    obj = cluster(name, nodes=2)
    template = obj["spec"]["nodePools"][0]
    obj["spec"]["nodePools"] = [
        {
            **template,
            "name": f"p{j}",
            "devices": [
                {**d, "attributes": {**d["attributes"], "serial": {"string": f"{serial}-{j}"}}}
                for d in template["devices"]
            ],
        }
        for j in range(8)
    ]
    return obj


def heavy(clusters: int = 1000) -> fnv1.RunFunctionRequest:
    xr = deployment(replicas=1024)
    xr["spec"]["template"]["spec"]["engines"][0]["members"][0]["template"]["spec"]["containers"][0]["env"] = ENV
    call = next(_calls)
    fleet = [_fleet_cluster(f"c{i}", f"{call}-{i}") for i in range(clusters)]
    return request(xr, required=resolved(clusters=fleet))


def light() -> fnv1.RunFunctionRequest:
    return request(cluster("a"))


# The runner and a call taking a request, or bytes sent as they are.
Served = tuple[FunctionRunner, Callable[[fnv1.RunFunctionRequest | bytes], Any]]


@contextmanager
def serving(*, deadline: float) -> Iterator[Served]:
    with worker_server(workers=2, deadline=deadline) as (runner, channel):
        stub = grpcv1.FunctionRunnerServiceStub(channel)
        raw = channel.unary_unary(METHOD, request_serializer=None, response_deserializer=None)
        yield runner, lambda req: raw(req, timeout=60) if isinstance(req, bytes) else stub.RunFunction(req, timeout=60)


def fatal(rsp: fnv1.RunFunctionResponse) -> list[str]:
    return [r.message for r in rsp.results if r.severity == fnv1.SEVERITY_FATAL]


def published(rsp: fnv1.RunFunctionResponse) -> list[str]:
    return [c.reason for c in rsp.conditions]


def in_background(call: Callable[[fnv1.RunFunctionRequest], Any], done: list[str]) -> Future[Any]:
    """The heavy request on another thread; `done` gets "heavy" when it is answered."""
    future = ThreadPoolExecutor(max_workers=1).submit(call, heavy())
    future.add_done_callback(lambda _: done.append("heavy"))
    return future


@pytest.fixture(scope="module")
def served() -> Iterator[Served]:
    """Two workers with a deadline no test request reaches."""
    with serving(deadline=60) as s:
        yield s


def test_a_light_request_is_answered_while_a_heavy_one_is_composed(served: Served) -> None:
    _, call = served
    done: list[str] = []
    heavy_call = in_background(call, done)
    time.sleep(0.2)  # let the heavy request reach its worker
    got = published(call(light()))
    done.append("light")
    assert (got, fatal(heavy_call.result(timeout=60)), done) == (["Published"], [], ["light", "heavy"])


def test_a_request_past_its_deadline_changes_nothing_and_its_worker_is_replaced() -> None:
    with serving(deadline=0.2) as (runner, call):
        before = set(runner.pool.pids)  # type: ignore[union-attr]
        late = call(heavy())
        after = published(call(light()))
        replaced = len(before - set(runner.pool.pids))  # type: ignore[union-attr]
    assert (as_dict(late)["desired"], fatal(late), after, replaced) == (
        {},
        [
            "composing ModelDeployment failed: it was still running after the 0.2 s deadline, and was stopped; nothing was changed"
        ],
        ["Published"],
        1,
    )


def test_a_worker_killed_mid_request_costs_only_that_request(served: Served) -> None:
    runner, call = served
    idle = set(runner.pool.pids)  # type: ignore[union-attr]
    done: list[str] = []
    heavy_call = in_background(call, done)
    deadline = time.monotonic() + 30
    while not idle - set(runner.pool.pids) and time.monotonic() < deadline:  # type: ignore[union-attr]
        time.sleep(0.01)  # until the heavy request has taken a worker
    (busy,) = idle - set(runner.pool.pids)  # type: ignore[union-attr]
    os.kill(busy, signal.SIGKILL)
    killed = fatal(heavy_call.result(timeout=60))
    after = published(call(light()))
    assert (killed, after) == (
        ["composing ModelDeployment failed: the worker composing it exited (code -9); nothing was changed"],
        ["Published"],
    )


def test_bytes_that_are_not_a_request_are_refused_and_cost_no_worker(served: Served) -> None:
    runner, call = served
    before = set(runner.pool.pids)  # type: ignore[union-attr]
    with pytest.raises(grpc.RpcError) as e:
        call(b"\x0a\x10\x0a\x01t")
    after = published(call(light()))
    code = e.value.code()  # pyright: ignore[reportAttributeAccessIssue]
    assert (code, after, set(runner.pool.pids)) == (  # type: ignore[union-attr]
        grpc.StatusCode.INVALID_ARGUMENT,
        ["Published"],
        before,
    )


def test_workers_that_died_while_idle_are_replaced_unnoticed(served: Served) -> None:
    runner, call = served
    for pid in runner.pool.pids:  # type: ignore[union-attr]
        os.kill(pid, signal.SIGKILL)
    time.sleep(0.2)
    got = [published(call(light())) for _ in range(3)]
    assert got == [["Published"]] * 3


def _until_busy(runner: FunctionRunner, idle: set[int]) -> set[int]:
    """The workers that left the idle list, once one has (a request reached it)."""
    deadline = time.monotonic() + 60
    while not idle - set(runner.pool.pids) and time.monotonic() < deadline:  # type: ignore[union-attr]
        time.sleep(0.01)
    busy = idle - set(runner.pool.pids)  # type: ignore[union-attr]
    assert busy, "no request reached a worker"
    return busy


def test_a_cancelled_call_is_stopped_and_the_next_call_gets_a_free_worker() -> None:
    # One worker, a ~3 s request: the old pool gave the worker back while it still composed the
    # cancelled request, and the light call waited behind it on the very same process.
    with worker_server(workers=1, deadline=60, max_receive_mib=16) as (runner, channel):
        stub = grpcv1.FunctionRunnerServiceStub(channel)
        idle = set(runner.pool.pids)  # type: ignore[union-attr]
        cancelled = stub.RunFunction.future(heavy(clusters=3000), timeout=60)
        busy = _until_busy(runner, idle)
        cancelled.cancel()
        got = published(stub.RunFunction(light(), timeout=60))
        replaced = not busy & set(runner.pool.pids)  # type: ignore[union-attr]
    assert (got, replaced) == (["Published"], True)


def test_light_calls_do_not_queue_behind_heavy_ones() -> None:
    # Four heavy calls on two workers: before, the light call queued behind them and was answered
    # after three of them; now heavy calls hold one worker and the light call takes the other.
    with worker_server(workers=2, deadline=60) as (runner, channel):
        stub = grpcv1.FunctionRunnerServiceStub(channel)
        idle = set(runner.pool.pids)  # type: ignore[union-attr]
        heavies = [heavy() for _ in range(4)]
        calls = [stub.RunFunction.future(h, timeout=120) for h in heavies]
        _until_busy(runner, idle)
        time.sleep(0.2)  # the other heavy calls queue
        got = published(stub.RunFunction(light(), timeout=120))
        answered_before = sum(c.done() for c in calls)
        outcomes = [fatal(c.result()) for c in calls]
    assert (got, answered_before, outcomes) == (["Published"], 0, [[]] * 4)
