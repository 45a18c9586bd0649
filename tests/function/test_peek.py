"""peek.py: what the server's main process reads of request and response bytes, against protobuf's own parse.

Each case builds a whole message, serializes it, peeks at the bytes and compares the whole result
with what parsing the message and dropping the fleet gives. Bytes that are not a message raise
DecodeError, as parsing does.
"""

from collections.abc import Callable
from dataclasses import dataclass

import pytest
from crossplane.function import response
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from google.protobuf import struct_pb2
from google.protobuf.message import DecodeError
from modelplane_function.server import peek

from .factories import cluster, deployment, namespace, request, resolved, struct

XR = deployment(replicas=2)
FLEET = resolved(clusters=[cluster("a"), cluster("b")], replicas=[], ns=namespace())


def _full() -> fnv1.RunFunctionRequest:
    req = request(XR, observed={"replica-a-0": {"kind": "ModelReplica", "metadata": {"name": "r"}}}, required=FLEET)
    req.meta.capabilities.append(fnv1.CAPABILITY_REQUIRED_RESOURCES)
    req.desired.composite.resource.CopyFrom(struct({"status": {"phase": "x"}}))
    req.desired.resources["other"].resource.CopyFrom(struct({"kind": "ConfigMap"}))
    req.input.CopyFrom(struct({"mode": "fast"}))
    req.context.CopyFrom(struct({"apiextensions.crossplane.io/environment": {"region": "eu"}}))
    req.credentials["creds"].credential_data.data["key"] = b"secret"
    req.observed.composite.connection_details["password"] = b"pw"
    return req


def _slim(req: fnv1.RunFunctionRequest) -> fnv1.RunFunctionRequest:
    """What peek.request must return: the request without its fleet, by protobuf's own hand."""
    out = fnv1.RunFunctionRequest()
    out.CopyFrom(req)
    if out.HasField("observed"):
        out.observed.ClearField("resources")
    out.ClearField("credentials")
    out.ClearField("extra_resources")
    out.ClearField("required_schemas")
    for name in list(out.required_resources):
        out.required_resources[name].Clear()
    return out


@dataclass(frozen=True)
class RequestCase:
    name: str
    build: Callable[[], fnv1.RunFunctionRequest]


REQUESTS = [
    RequestCase(name="a ModelDeployment request keeps all but its fleet", build=_full),
    RequestCase(name="an empty request is an empty request", build=fnv1.RunFunctionRequest),
    RequestCase(name="a request with no requirements answered", build=lambda: request(cluster("a"))),
    RequestCase(
        name="a requirement answered with nothing is still named",
        build=lambda: request(XR, required={"clusters": [], "namespace": [namespace()]}),
    ),
]


@pytest.mark.parametrize("case", REQUESTS, ids=lambda c: c.name)
def test_a_peeked_request_is_the_request_without_its_fleet(case: RequestCase) -> None:
    req = case.build()
    assert peek.request(req.SerializeToString()) == _slim(req)


def test_the_fleet_is_skipped_never_read() -> None:
    """Fleet items that would not even parse are stepped over by their lengths."""
    req = request(XR)
    entry = b"\x0a\x08clusters" + b"\x12\x05" + b"\x0a\x03\xff\xff\xff"  # key; Resources{items: 3 bytes of junk}
    data = req.SerializeToString() + b"\x42" + bytes([len(entry)]) + entry
    with pytest.raises(DecodeError):
        fnv1.RunFunctionRequest.FromString(data)
    want = fnv1.RunFunctionRequest()
    want.CopyFrom(req)
    want.required_resources["clusters"].SetInParent()
    assert peek.request(data) == want


@dataclass(frozen=True)
class Unreadable:
    name: str
    data: bytes


UNREADABLE = [
    Unreadable(name="a length past the end", data=b"\x0a\x10\x0a\x01t"),
    Unreadable(name="a varint cut short", data=b"\x08\xff"),
    Unreadable(name="a group wire type", data=b"\x0b"),
    Unreadable(name="field number zero", data=b"\x02\x00"),
    Unreadable(name="a map key that is not UTF-8", data=b"\x42\x04\x0a\x02\xff\xfe"),
    Unreadable(name="a composite that is not a Resource", data=b"\x12\x04\x0a\x02\x0a\xff"),
]


@pytest.mark.parametrize("case", UNREADABLE, ids=lambda c: c.name)
def test_bytes_that_are_not_a_request_raise_decode_error(case: Unreadable) -> None:
    with pytest.raises(DecodeError):
        peek.request(case.data)


def _answered() -> fnv1.RunFunctionResponse:
    rsp = response.to(_full())
    rsp.desired.resources["replica-a-0"].resource.CopyFrom(struct({"kind": "ModelReplica"}))
    rsp.desired.resources["replica-b-0"].resource.CopyFrom(struct({"kind": "ModelReplica"}))
    rsp.conditions.add(type="ReplicasScheduled", status=fnv1.STATUS_CONDITION_TRUE, reason="Scheduled")
    response.warning(rsp, "ModelReplica x relabelled")
    rsp.requirements.resources["clusters"].kind = "InferenceCluster"
    rsp.output.CopyFrom(struct({"placed": 2}))
    return rsp


def _fatal() -> fnv1.RunFunctionResponse:
    rsp = response.to(fnv1.RunFunctionRequest(meta=fnv1.RequestMeta(tag="t")))
    response.fatal(rsp, "no")
    return rsp


@dataclass(frozen=True)
class ResponseCase:
    name: str
    build: Callable[[], fnv1.RunFunctionResponse]
    composed: int


RESPONSES = [
    ResponseCase(name="a response keeps its meta, results and conditions and counts what it composes",
                 build=_answered, composed=3),
    ResponseCase(name="a fatal response composes nothing", build=_fatal, composed=0),
    ResponseCase(name="an empty response", build=fnv1.RunFunctionResponse, composed=0),
]  # fmt: skip


@pytest.mark.parametrize("case", RESPONSES, ids=lambda c: c.name)
def test_a_peeked_response_is_its_outcome_and_what_it_composes(case: ResponseCase) -> None:
    rsp = case.build()
    want = fnv1.RunFunctionResponse(results=rsp.results, conditions=rsp.conditions)
    if rsp.HasField("meta"):
        want.meta.CopyFrom(rsp.meta)
    assert peek.response(rsp.SerializeToString()) == peek.Answer(response=want, composed=case.composed)


def test_a_key_sent_twice_is_composed_once() -> None:
    """Protobuf merges map entries with one key: the count follows the parse, not the wire."""
    rsp = fnv1.RunFunctionResponse()
    rsp.desired.resources["a"].resource.CopyFrom(struct_pb2.Struct())
    data = rsp.SerializeToString() * 2
    assert (peek.response(data).composed, len(fnv1.RunFunctionResponse.FromString(data).desired.resources)) == (1, 1)


def _weighed(xr: dict[str, object]) -> fnv1.RunFunctionRequest:
    return request(xr, required=FLEET)


BIG = deployment(replicas=1024)
BIG["spec"]["template"]["spec"]["engines"][0]["members"][0]["template"]["spec"]["containers"][0]["args"] = ["a" * 2**20]
TEMPLATE = struct_pb2.Value(struct_value=struct(XR["spec"]["template"])).ByteSize()  # as the request holds it
REPLICA = 3 * 1024  # what placing and composing one replica is worth
WEIGHTS = [
    # (name, request, what is added to its bytes: each replica's work and template, templates capped at the largest answer)
    ("a cluster weighs its bytes", request(cluster("a")), 0),
    ("a deployment adds its template and work per replica", _weighed(XR), 2 * (TEMPLATE + REPLICA)),
    ("templates past what an answer holds count as a full answer", _weighed(BIG), 4 * 2**20 + 1024 * REPLICA),
    (
        "replicas past the XRD's 1,024 are refused at once",
        _weighed(deployment(replicas=40_000)),
        1024 * (TEMPLATE + REPLICA),
    ),
    ("a negative replica count adds nothing", _weighed(deployment(replicas=-3)), 0),
    ("replicas that are not a number add nothing", _weighed(deployment(replicas="many")), 0),
]


@pytest.mark.parametrize(("name", "req", "added"), WEIGHTS, ids=[w[0] for w in WEIGHTS])
def test_weight_is_the_request_plus_what_composing_it_builds(
    name: str, req: fnv1.RunFunctionRequest, added: int
) -> None:
    data = req.SerializeToString()
    assert peek.weight(data) == len(data) + added, name
