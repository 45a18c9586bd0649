"""The gRPC servicer: request in, the handler for the observed XR's kind, response out.

The one catch-all of the function lives here: an unexpected exception becomes a single FATAL result
on a fresh response, so Crossplane changes nothing rather than applying a half-built desired state.
So does a response over the size Crossplane accepts (limits.py): it would be refused anyway.

`modelplane serve` composes in worker processes (workers.py), so one slow or crashing request
cannot hold up the others, and requests the server estimates heavy (peek.weight) are kept off the
last free worker, so light ones do not queue behind them; without workers (offline render,
tests) requests are composed on the server's event loop, one at a time. The server hands
FunctionRunner.run the request's bytes and sends the bytes it returns: with workers, the main
process never parses a request whole (peek.py reads the little it needs).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

import grpc
from crossplane.function import logging, response
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from google.protobuf.message import DecodeError
from modelplane import names

from modelplane_function.handlers import cluster, demand, deployment, limits, quota, replica
from modelplane_function.server import peek
from modelplane_function.server.workers import (
    DEFAULT_DEADLINE_SECONDS,
    CallFailedError,
    UnreadableRequestError,
    WorkerPool,
)

_HANDLERS = {
    names.KIND_DEPLOYMENT: deployment.handle,
    names.KIND_REPLICA: replica.handle,
    names.KIND_CLUSTER: cluster.handle,
    names.KIND_DEMAND: demand.handle,
    names.KIND_QUOTA: quota.handle,
}


@contextmanager
def _cycle_collector_paused() -> Iterator[None]:
    """Pause Python's cycle collector for one call.

    A call over a large fleet allocates millions of short-lived objects (Struct conversion,
    validation), which triggered repeated full collections over the whole growing heap: more than
    half of a call at 1,000 clusters and 10,000 replicas. Reference counting still frees everything
    acyclic at once; cycles wait for the first collection after the call.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def compose(req: fnv1.RunFunctionRequest) -> fnv1.RunFunctionResponse:
    """One RunFunction, start to finish; never raises."""
    fields = req.observed.composite.resource.fields
    kind = fields["kind"].string_value if "kind" in fields else ""
    api_version = fields["apiVersion"].string_value if "apiVersion" in fields else ""
    handler = _HANDLERS.get(kind) if api_version == names.API_VERSION else None
    if handler is None:
        rsp = response.to(req)
        response.fatal(rsp, f"function-modelplane does not compose {api_version} {kind}")
        return rsp
    log = logging.get_logger()
    try:
        rsp = response.to(req)
        with _cycle_collector_paused():
            handler(req, rsp)
    except Exception as e:  # the one boundary where a bug becomes a FATAL result
        log.exception("unexpected error", kind=kind)
        rsp = response.to(req)
        response.fatal(rsp, f"internal error composing {kind}: {type(e).__name__}: {e}")
        return rsp
    size = rsp.ByteSize()
    if size > limits.MAX_RESPONSE_BYTES:
        rsp = response.to(req)
        response.fatal(
            rsp,
            f"the response composing {kind} is {limits.mib(size)}, over the {limits.mib(limits.MAX_RESPONSE_BYTES)} "
            "Crossplane accepts: nothing was changed",
        )
    return rsp


# A call estimated to read and build more than this is heavy: ~100 ms of a worker and more (a fleet
# of ~100 clusters, or a deployment of many replicas). Heavy calls never take the last free worker.
HEAVY_BYTES = 2 * limits.MIB


def _heavy(request: bytes) -> bool:
    try:
        return peek.weight(request) > HEAVY_BYTES
    except DecodeError:  # its worker says why it does not parse
        return False


class FunctionRunner:
    """Serves every Composition of this repository, dispatching on the composite's kind.

    `workers` > 0 composes in that many worker processes, each call under `deadline` seconds.
    """

    def __init__(
        self,
        *,
        workers: int = 0,
        deadline: float = DEFAULT_DEADLINE_SECONDS,
        level: logging.Level = logging.Level.INFO,
    ) -> None:
        self.log = logging.get_logger()
        self.pool = WorkerPool(workers=workers, deadline=deadline, level=level) if workers > 0 else None

    async def run(self, request: bytes) -> bytes:
        """A serialized RunFunctionResponse to a serialized request, as the server sends it.

        UnreadableRequestError when the bytes are not a RunFunctionRequest.
        """
        if self.pool is None:
            try:
                parsed = fnv1.RunFunctionRequest.FromString(request)
            except DecodeError as e:
                raise UnreadableRequestError(str(e)) from e
            return compose(parsed).SerializeToString()
        try:
            return await self.pool.run(request, heavy=_heavy(request))
        except CallFailedError as e:
            return self._failed(request, e).SerializeToString()

    def _failed(self, request: bytes, problem: CallFailedError) -> fnv1.RunFunctionResponse:
        """The FATAL answer to a request its worker did not answer (peeked at, never parsed whole)."""
        try:
            slim = peek.request(request)
        except DecodeError as e:
            raise UnreadableRequestError(str(e)) from e
        fields = slim.observed.composite.resource.fields
        kind = fields["kind"].string_value if "kind" in fields else ""
        self.log.warning("call failed", kind=kind, problem=str(problem))
        rsp = response.to(slim)
        response.fatal(rsp, f"composing {kind} failed: {problem}; nothing was changed")
        return rsp

    async def RunFunction(
        self,
        request: fnv1.RunFunctionRequest,
        context: grpc.aio.ServicerContext | None,  # noqa: ARG002 - part of the gRPC method signature
    ) -> fnv1.RunFunctionResponse:
        """The same call on messages, for in-process callers (tests, benchmarks); the server uses run()."""
        if self.pool is None:
            return compose(request)
        return fnv1.RunFunctionResponse.FromString(await self.run(request.SerializeToString()))

    async def start(self) -> None:
        """Wait for the workers, if any, to be ready."""
        if self.pool is not None:
            await self.pool.start()

    async def close(self) -> None:
        if self.pool is not None:
            await self.pool.close()
