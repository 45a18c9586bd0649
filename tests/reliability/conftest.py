"""The function two ways: behind a real gRPC server (end-to-end cases) and as an in-process servicer
(property tests, where thousands of calls must stay fast)."""

import asyncio
from collections.abc import Callable, Iterator

import pytest
from crossplane.function import logging
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane_function.server.fn import FunctionRunner

from tests.function.conftest import grpc_server

logging.configure(level=logging.Level.DISABLED)

RunFunction = Callable[[fnv1.RunFunctionRequest], fnv1.RunFunctionResponse]


@pytest.fixture(scope="session")
def grpc_function() -> Iterator[RunFunction]:
    """RunFunction over a real grpc.aio server on a free local port."""
    with grpc_server() as call:
        yield call


@pytest.fixture(scope="session")
def servicer() -> Iterator[RunFunction]:
    """RunFunction on the servicer itself, in one event loop: the same code path minus the transport."""
    runner = FunctionRunner()
    loop = asyncio.new_event_loop()
    yield lambda req: loop.run_until_complete(asyncio.wait_for(runner.RunFunction(req, None), timeout=30))
    loop.close()
