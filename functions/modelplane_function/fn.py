"""The gRPC servicer: request in, the handler for the observed XR's kind, response out.

The one catch-all of the function lives here: an unexpected exception becomes a single FATAL result
on a fresh response, so Crossplane changes nothing rather than applying a half-built desired state.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

import grpc
from crossplane.function import logging, response
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from crossplane.function.proto.v1 import run_function_pb2_grpc as grpcv1
from modelplane import names

from modelplane_function import cluster, deployment, replica

_HANDLERS = {
    names.KIND_DEPLOYMENT: deployment.handle,
    names.KIND_REPLICA: replica.handle,
    names.KIND_CLUSTER: cluster.handle,
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


class FunctionRunner(grpcv1.FunctionRunnerServiceServicer):
    """Serves every Composition of this repository, dispatching on the composite's kind."""

    def __init__(self) -> None:
        self.log = logging.get_logger()

    async def RunFunction(
        self,
        request: fnv1.RunFunctionRequest,
        context: grpc.aio.ServicerContext | None,  # noqa: ARG002 - part of the gRPC method signature
    ) -> fnv1.RunFunctionResponse:
        req = request
        fields = req.observed.composite.resource.fields
        kind = fields["kind"].string_value if "kind" in fields else ""
        api_version = fields["apiVersion"].string_value if "apiVersion" in fields else ""
        handler = _HANDLERS.get(kind) if api_version == names.API_VERSION else None
        if handler is None:
            rsp = response.to(req)
            response.fatal(rsp, f"function-modelplane does not compose {api_version} {kind}")
            return rsp
        try:
            rsp = response.to(req)
            with _cycle_collector_paused():
                handler(req, rsp)
        except Exception as e:  # the one boundary where a bug becomes a FATAL result
            self.log.exception("unexpected error", kind=kind)
            rsp = response.to(req)
            response.fatal(rsp, f"internal error composing {kind}: {type(e).__name__}: {e}")
        return rsp
