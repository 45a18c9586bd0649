"""The real function behind a real grpc.aio server, called with the SDK's own stub."""

import asyncio
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import grpc
import pytest
from crossplane.function import logging
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from crossplane.function.proto.v1 import run_function_pb2_grpc as grpcv1
from google.protobuf import json_format
from modelplane_function.handlers.convert import plain
from modelplane_function.server import server
from modelplane_function.server.fn import FunctionRunner

logging.configure(level=logging.Level.DISABLED)


class Loop:
    """An event loop in a thread, hosting the aio server while tests call it synchronously."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout=30)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)


@contextmanager
def grpc_server(
    *, max_receive_mib: int | None = None
) -> Iterator[Callable[[fnv1.RunFunctionRequest], fnv1.RunFunctionResponse]]:
    """RunFunction over a real grpc.aio server on a free local port, called with the SDK's stub.

    The client keeps grpc's default 4 MiB receive limit, as Crossplane does; `max_receive_mib` raises
    the server's (`--max-recv-message-size`) for requests carrying a large fleet.
    """
    loop = Loop()
    options = [] if max_receive_mib is None else [("grpc.max_receive_message_length", max_receive_mib << 20)]
    srv, port = loop.run(server.start(FunctionRunner(), "127.0.0.1:0", creds=None, options=options))
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    stub = grpcv1.FunctionRunnerServiceStub(channel)
    try:
        yield lambda req: stub.RunFunction(req, timeout=30)
    finally:
        channel.close()
        loop.run(srv.stop(grace=None))
        loop.close()


@contextmanager
def worker_server(
    *, workers: int, deadline: float, max_receive_mib: int = 4
) -> Iterator[tuple[FunctionRunner, grpc.Channel]]:
    """A real grpc.aio server composing in `workers` worker processes, as `modelplane serve` does; a channel to it."""
    loop = Loop()
    runner = FunctionRunner(workers=workers, deadline=deadline)
    options = [("grpc.max_receive_message_length", max_receive_mib << 20)]
    srv, port = loop.run(server.start(runner, "127.0.0.1:0", creds=None, options=options))
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    try:
        yield runner, channel
    finally:
        channel.close()
        loop.run(srv.stop(grace=None))
        loop.run(runner.close())
        loop.close()


@pytest.fixture(scope="session")
def run_function() -> Iterator[Callable[[fnv1.RunFunctionRequest], fnv1.RunFunctionResponse]]:
    with grpc_server() as call:
        yield call


def as_dict(rsp: fnv1.RunFunctionResponse, *, demand: bool = False) -> dict[str, Any]:
    """A whole response as plain data (integral numbers as ints), for whole-value comparison.

    A ModelDeployment's response also composes its ModelDemand (the `demand` resource), which
    depends on every cluster of the fleet: it is compared by the tests about stated demand
    (test_stated_demand.py, with `demand=True`) and left out of the others' whole responses.
    """
    out = plain(json_format.MessageToDict(rsp, preserving_proto_field_name=True))
    resources = out.get("desired", {}).get("resources")
    if not demand and isinstance(resources, dict) and "demand" in resources:
        del resources["demand"]
        if not resources:
            del out["desired"]["resources"]
    return out
