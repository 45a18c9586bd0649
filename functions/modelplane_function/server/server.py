"""The gRPC server, shared by `modelplane serve`, `modelplane render` and the tests.

It serves what the SDK's runtime.serve serves (RunFunction of the v1 and v1beta1 services, and
server reflection) but returns the started server instead of blocking, so callers can bind port 0
and learn the port. Differences from the SDK: RunFunction is registered without a request
deserializer or response serializer, so gRPC hands over the request's bytes and sends the bytes
the FunctionRunner returns (the main process of `modelplane serve` never parses a 23 MiB fleet
only to serialize it again for a worker; v1beta1 shares v1's wire format, so both are served
alike, where the SDK converts every v1beta1 message through a parse and a serialization); with
--insecure the certificates are not loaded at all (insecure wins, as the function spec says, and
nothing is bound twice); and SO_REUSEPORT is off, so starting on a port that is already in use
fails instead of silently sharing it with another process.
"""

from __future__ import annotations

import re
import ssl
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import grpc
from crossplane.function import logging, runtime
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from crossplane.function.proto.v1beta1 import run_function_pb2 as fnv1beta1
from grpc_reflection.v1alpha import reflection

from modelplane_function.server.fn import FunctionRunner
from modelplane_function.server.workers import UnreadableRequestError

# The services whose RunFunction this server answers: one wire format, two package names.
SERVICES = tuple(m.DESCRIPTOR.services_by_name["FunctionRunnerService"].full_name for m in (fnv1, fnv1beta1))


class ServeError(RuntimeError):
    """The server cannot start (address in use, unreadable certificates)."""


def load_credentials(tls_certs_dir: str) -> grpc.ServerCredentials:
    """mTLS server credentials from tls.crt, tls.key and ca.crt (the SDK's loader, with a clear error).

    grpc takes any bytes as PEM here and only fails when binding the port, with nothing but "Failed
    to bind": the files are parsed first, so a broken certificate is reported as one.
    """
    try:
        creds = runtime.load_credentials(tls_certs_dir)
    except OSError as e:
        msg = f"cannot load TLS certificates from {tls_certs_dir}: {e.strerror}: {e.filename}"
        raise ServeError(msg) from e
    certs = Path(tls_certs_dir)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    try:
        context.load_cert_chain(certs / "tls.crt", certs / "tls.key")
    except ssl.SSLError as e:
        msg = (
            f"cannot load TLS certificates from {tls_certs_dir}: tls.crt and tls.key are not a PEM certificate "
            f"and its private key ({_said(e)})"
        )
        raise ServeError(msg) from e
    try:
        context.load_verify_locations(cafile=certs / "ca.crt")
    except ssl.SSLError as e:
        msg = f"cannot load TLS certificates from {tls_certs_dir}: ca.crt is not a PEM CA certificate ({_said(e)})"
        raise ServeError(msg) from e
    return creds


def _said(e: ssl.SSLError) -> str:
    """OpenSSL's complaint without the interpreter's source location."""
    return re.sub(r"\s*\(_ssl\.c:\d+\)$", "", str(e.reason or e.strerror or e))


def _run_function(runner: FunctionRunner) -> grpc.RpcMethodHandler:
    """RunFunction on bytes: no deserializer or serializer, so gRPC passes them through untouched."""

    async def run_function(request: bytes, context: grpc.aio.ServicerContext[bytes, bytes]) -> bytes:
        try:
            return await runner.run(request)
        except UnreadableRequestError as e:
            logging.get_logger().warning("Refused a request that is not a RunFunctionRequest", problem=str(e))
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"the request is not a RunFunctionRequest: {e}")

    return grpc.unary_unary_rpc_method_handler(run_function)


async def start(
    runner: FunctionRunner,
    address: str,
    *,
    creds: grpc.ServerCredentials | None,
    options: Sequence[tuple[str, Any]] = (),
) -> tuple[grpc.aio.Server, int]:
    """Start serving on `address` (mTLS with `creds`, plaintext without); return the server and its port.

    The runner's workers, if any, are started first, so the first call does not wait for them.
    """
    await runner.start()
    server = grpc.aio.server(options=[*options, ("grpc.so_reuseport", 0)])
    handlers = {"RunFunction": _run_function(runner)}
    for service in SERVICES:
        server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(service, handlers),))
    reflection.enable_server_reflection(runtime.SERVICE_NAMES, server)
    try:
        port = server.add_secure_port(address, creds) if creds is not None else server.add_insecure_port(address)
    except RuntimeError as e:  # grpc says only "Failed to bind"; its log line has the OS error
        msg = f"cannot listen on {address}: the address is in use or not available on this host"
        raise ServeError(msg) from e
    await server.start()
    return server, port
