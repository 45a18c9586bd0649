"""What the server answers, whatever the caller: both RunFunction versions, reflection, bytes that are no request.

RunFunction is served on bytes (server.py), so these pin what the SDK's registration gave: a
v1beta1 caller gets the v1 answer in its own package's message, reflection names every service,
and bytes that are not a RunFunctionRequest are refused with INVALID_ARGUMENT.
"""

from collections.abc import Iterator

import grpc
import pytest
from crossplane.function import runtime
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from crossplane.function.proto.v1beta1 import run_function_pb2 as fnv1beta1
from crossplane.function.proto.v1beta1 import run_function_pb2_grpc as grpcv1beta1
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from modelplane_function.server import server
from modelplane_function.server.fn import FunctionRunner

from .conftest import Loop
from .factories import cluster, deployment, request, resolved

V1 = "/apiextensions.fn.proto.v1.FunctionRunnerService/RunFunction"


@pytest.fixture(scope="module")
def channel() -> Iterator[grpc.Channel]:
    loop = Loop()
    srv, port = loop.run(server.start(FunctionRunner(), "127.0.0.1:0", creds=None))
    with grpc.insecure_channel(f"127.0.0.1:{port}") as ch:
        yield ch
    loop.run(srv.stop(grace=None))
    loop.close()


def test_a_v1beta1_caller_gets_the_v1_answer(channel: grpc.Channel) -> None:
    req = request(deployment(replicas=2), required=resolved(clusters=[cluster("a"), cluster("b")]))
    call = channel.unary_unary(V1, request_serializer=None, response_deserializer=None)
    v1 = call(req.SerializeToString(), timeout=30)
    beta = grpcv1beta1.FunctionRunnerServiceStub(channel).RunFunction(
        fnv1beta1.RunFunctionRequest.FromString(req.SerializeToString()), timeout=30
    )
    assert fnv1.RunFunctionResponse.FromString(beta.SerializeToString()) == fnv1.RunFunctionResponse.FromString(v1)


def test_reflection_lists_every_service(channel: grpc.Channel) -> None:
    stub = reflection_pb2_grpc.ServerReflectionStub(channel)
    asked = iter([reflection_pb2.ServerReflectionRequest(list_services="")])
    (answer,) = stub.ServerReflectionInfo(asked)  # pyright: ignore[reportCallIssue] - the reflection stub is untyped
    assert sorted(s.name for s in answer.list_services_response.service) == sorted(runtime.SERVICE_NAMES)


def test_bytes_that_are_not_a_request_are_refused(channel: grpc.Channel) -> None:
    call = channel.unary_unary(V1, request_serializer=None, response_deserializer=None)
    with pytest.raises(grpc.RpcError) as e:
        call(b"\x0a\x10\x0a\x01t", timeout=30)
    got = (e.value.code(), e.value.details())  # pyright: ignore[reportAttributeAccessIssue]
    assert got == (
        grpc.StatusCode.INVALID_ARGUMENT,
        "the request is not a RunFunctionRequest: Error parsing message with type "
        "'apiextensions.fn.proto.v1.RunFunctionRequest': Wire format was corrupt",
    )
