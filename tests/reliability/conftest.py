"""The function two ways: behind a real gRPC server (end-to-end cases) and as an in-process servicer
(property tests, where thousands of calls must stay fast)."""

import asyncio
from collections.abc import Callable, Iterator

import grpc
import pytest
from crossplane.function import logging
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from crossplane.function.proto.v1 import run_function_pb2_grpc as grpcv1
from modelplane_function import server
from modelplane_function.fn import FunctionRunner

from tests.function.conftest import Loop

logging.configure(level=logging.Level.DISABLED)

RunFunction = Callable[[fnv1.RunFunctionRequest], fnv1.RunFunctionResponse]


@pytest.fixture(scope="session")
def grpc_function() -> Iterator[RunFunction]:
    """RunFunction over a real grpc.aio server on a free local port."""
    loop = Loop()
    srv, port = loop.run(server.start(FunctionRunner(), "127.0.0.1:0", creds=None))
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    stub = grpcv1.FunctionRunnerServiceStub(channel)
    yield lambda req: stub.RunFunction(req, timeout=30)
    channel.close()
    loop.run(srv.stop(grace=None))
    loop.close()


@pytest.fixture(scope="session")
def servicer() -> Iterator[RunFunction]:
    """RunFunction on the servicer itself, in one event loop: the same code path minus the transport."""
    runner = FunctionRunner()
    loop = asyncio.new_event_loop()
    yield lambda req: loop.run_until_complete(asyncio.wait_for(runner.RunFunction(req, None), timeout=30))
    loop.close()
