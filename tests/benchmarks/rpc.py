"""RunFunction over real gRPC: a `modelplane serve` process on 127.0.0.1 and the SDK stubs as client.

The request is what Crossplane sends a ModelDeployment step once its requirements are resolved:
the XR, its observed ModelReplicas, and every InferenceCluster, every ModelReplica of the fleet
and the deployment's Namespace as required resources. The server is started exactly as a
DeploymentRuntimeConfig would start it, with `--max-recv-message-size` in MiB, because a large
fleet's request exceeds grpc's 4 MiB default. The client keeps grpc's default 4 MiB *receive*
limit, as Crossplane does, so an oversized response fails the benchmark instead of passing here.
"""

from __future__ import annotations

import math
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from crossplane.function.proto.v1 import run_function_pb2_grpc as grpcv1
from google.protobuf import json_format, struct_pb2
from modelplane_function.cli.render.pipeline import CAPABILITIES

MIB = 1024 * 1024
DEFAULT_LIMIT_MIB = 4  # grpc's default receive limit, and the SDK's --max-recv-message-size default


def _struct(obj: Mapping[str, Any]) -> struct_pb2.Struct:
    return json_format.ParseDict(dict(obj), struct_pb2.Struct())


def request(
    xr: Mapping[str, Any],
    *,
    observed: Mapping[str, Mapping[str, Any]],
    clusters: Sequence[Mapping[str, Any]],
    replicas: Sequence[Mapping[str, Any]],
    namespace: Mapping[str, Any],
    demands: Sequence[Mapping[str, Any]] = (),
) -> fnv1.RunFunctionRequest:
    """A resolved ModelDeployment request, as Crossplane builds it (`demands`: the other deployments' ModelDemands)."""
    req = fnv1.RunFunctionRequest(meta=fnv1.RequestMeta(tag="bench", capabilities=CAPABILITIES))
    req.observed.composite.resource.CopyFrom(_struct(xr))
    for key, obj in sorted(observed.items()):
        req.observed.resources[key].resource.CopyFrom(_struct(obj))
    answers = (
        ("clusters", clusters),
        ("replicas", replicas),
        ("namespace", [namespace]),
        ("demands", demands),
    )
    for name, objs in answers:
        items = req.required_resources[name]
        for obj in objs:
            items.items.add().resource.CopyFrom(_struct(obj))
    return req


def recv_limit_mib(request_bytes: int) -> int:
    """The --max-recv-message-size a request of this size needs: the default, or the size rounded up with headroom."""
    need = math.ceil(request_bytes * 1.25 / MIB)
    return max(DEFAULT_LIMIT_MIB, need)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def modelplane_command() -> list[str]:
    script = Path(sys.executable).with_name("modelplane")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "from modelplane_function.cli.main import run; run()"]


class Client:
    """A blocking SDK stub on a channel with grpc's default limits (what Crossplane dials with)."""

    def __init__(self, address: str) -> None:
        self._channel = grpc.insecure_channel(address)
        self._stub = grpcv1.FunctionRunnerServiceStub(self._channel)

    def ready(self, timeout: float) -> bool:
        try:
            grpc.channel_ready_future(self._channel).result(timeout=timeout)
        except grpc.FutureTimeoutError:
            return False
        return True

    def run(self, req: fnv1.RunFunctionRequest) -> fnv1.RunFunctionResponse:
        return self._stub.RunFunction(req, timeout=120)

    def close(self) -> None:
        self._channel.close()


@dataclass(frozen=True)
class Served:
    """A running `modelplane serve` process: its address, pid and one connected client."""

    address: str
    pid: int
    client: Client


@contextmanager
def served(max_recv_mib: int) -> Iterator[Served]:
    """Run `modelplane serve --insecure` on a free local port for the block."""
    port = _free_port()
    cmd = [
        *modelplane_command(),
        "serve",
        "--insecure",
        f"--address=127.0.0.1:{port}",
        f"--max-recv-message-size={max_recv_mib}",
    ]
    log = tempfile.TemporaryFile()  # noqa: SIM115 - closed in the finally below; a file, not a pipe: a chatty server must never block on it
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=log)
    address = f"127.0.0.1:{port}"
    client = Client(address)
    try:
        deadline = time.monotonic() + 30
        while not client.ready(timeout=0.5):
            if proc.poll() is not None or time.monotonic() > deadline:
                log.seek(0)
                msg = f"modelplane serve did not start ({proc.returncode}): {log.read().decode()[-2000:]}"
                raise RuntimeError(msg)
        yield Served(address=address, pid=proc.pid, client=client)
    finally:
        client.close()
        log.close()
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextmanager
def serving(max_recv_mib: int) -> Iterator[Client]:
    """Like `served`, yielding only the connected client."""
    with served(max_recv_mib) as server:
        yield server.client
