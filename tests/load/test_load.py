"""A small load test for make test: 4 clients x 100 requests on the real gRPC server, no errors, no leak.

Leaks are judged by allocation counts and sizes (tracemalloc, after a warm-up and a full GC), not
by time: a call that left even one request's worth of objects behind would grow the heap by
tens of MiB over 400 calls, far above the bound.
"""

import gc
import tracemalloc
from collections.abc import Iterator

import grpc
import pytest
from crossplane.function.proto.v1 import run_function_pb2_grpc as grpcv1
from modelplane_function.server import server
from modelplane_function.server.fn import FunctionRunner

from tests.benchmarks.load import drive, requests
from tests.function.conftest import Loop

CLIENTS = 4
PER_CLIENT = 100
MAX_GROWTH_BYTES = 1024 * 1024
MAX_GROWTH_BLOCKS = 5_000


@pytest.fixture(scope="module")
def stubs() -> Iterator[list[grpcv1.FunctionRunnerServiceStub]]:
    loop = Loop()
    srv, port = loop.run(server.start(FunctionRunner(), "127.0.0.1:0", creds=None))
    channels = [grpc.insecure_channel(f"127.0.0.1:{port}") for _ in range(CLIENTS)]
    yield [grpcv1.FunctionRunnerServiceStub(c) for c in channels]
    for c in channels:
        c.close()
    loop.run(srv.stop(grace=None))
    loop.close()


def heap() -> tuple[int, int]:
    """(bytes, blocks) traced now, after a full collection."""
    gc.collect()
    stats = tracemalloc.take_snapshot().statistics("filename")
    return sum(s.size for s in stats), sum(s.count for s in stats)


def test_concurrent_clients_get_no_errors(stubs: list[grpcv1.FunctionRunnerServiceStub]) -> None:
    calls = [lambda r, s=s: s.RunFunction(r, timeout=60) for s in stubs]
    reqs = requests(calls[0], clusters=6, pools=4, existing=24, replicas=2)
    stats = drive(calls, reqs, CLIENTS * PER_CLIENT)
    assert (stats.errors, len(stats.latencies)) == ([], CLIENTS * PER_CLIENT)


# cel-expr-python keeps ~1 KiB per evaluation of a selector that calls a Python extension function
# (semver(), quantity()); the function's selector results outlive a call, so an unchanged fleet
# evaluates nothing after the warm-up and the heap must stay flat.
def test_the_heap_stays_flat_under_concurrent_load(stubs: list[grpcv1.FunctionRunnerServiceStub]) -> None:
    calls = [lambda r, s=s: s.RunFunction(r, timeout=60) for s in stubs]
    reqs = requests(calls[0], clusters=6, pools=4, existing=24, replicas=2)
    warm = drive(calls, reqs, len(reqs) * CLIENTS)
    tracemalloc.start()
    try:
        before = heap()
        stats = drive(calls, reqs, CLIENTS * PER_CLIENT)
        after = heap()
    finally:
        tracemalloc.stop()
    grown = (after[0] - before[0], after[1] - before[1])
    print(f"{len(stats.latencies)} calls; heap grew {grown[0]} bytes in {grown[1]} blocks")
    assert (warm.errors, stats.errors, len(stats.latencies)) == ([], [], CLIENTS * PER_CLIENT)
    assert (grown[0] < MAX_GROWTH_BYTES, grown[1] < MAX_GROWTH_BLOCKS) == (True, True), grown
