"""What the server's main process reads of a serialized request or response, without parsing the fleet.

The main process of `modelplane serve` only moves bytes between gRPC and its workers, yet it logs
every request (tag, composite, outcome) and answers FATAL itself when a worker fails. A
ModelDeployment's request carries the whole fleet (23 MiB at 1,000 clusters): parsing it there and
serializing it again for the worker cost more than half a second per call. These readers walk the
protobuf wire format instead, skipping the fleet by its length prefixes, and parse only the small
fields they keep: microseconds, whatever the request's size.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from google.protobuf.message import DecodeError
from modelplane import names

from modelplane_function.handlers import limits

# Field numbers of run_function.proto (v1 and v1beta1 share them).
_REQUEST_KEPT = frozenset({1, 3, 4, 5})  # meta, desired, input, context: small, and what response.to reads
_REQUEST_OBSERVED = 2
_REQUEST_REQUIRED = 8  # map<string, Resources>: each entry is one field 8
_STATE_COMPOSITE = 1
_STATE_RESOURCES = 2
_MAP_KEY = 1  # of a map entry; its value is field 2
_RESPONSE_KEPT = frozenset({1, 3, 6})  # meta, results, conditions
_RESPONSE_DESIRED = 2

_VARINT, _I64, _LEN, _I32 = 0, 1, 2, 5


@dataclass(frozen=True, slots=True)
class _Field:
    number: int
    start: int  # of the whole field, tag included
    value: int  # of the value (after the length prefix of a length-delimited one)
    end: int


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while shift < 64:  # noqa: PLR2004 - a varint is at most 64 bits
        if pos >= len(data):
            break
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:  # noqa: PLR2004 - no continuation bit
            return result, pos
        shift += 7
    msg = "truncated or overlong varint"
    raise DecodeError(msg)


def _fields(data: bytes, start: int = 0, end: int | None = None) -> Iterator[_Field]:
    """The top-level fields of the message in data[start:end], in wire order; values are skipped, not read."""
    end = len(data) if end is None else end
    pos = start
    while pos < end:
        begin = pos
        tag, pos = _varint(data, pos)
        number, wire_type = tag >> 3, tag & 7
        if wire_type == _VARINT:
            _, stop = _varint(data, pos)
        elif wire_type == _I64:
            stop = pos + 8
        elif wire_type == _LEN:
            length, pos = _varint(data, pos)
            stop = pos + length
        elif wire_type == _I32:
            stop = pos + 4
        else:  # groups (3, 4) and invalid types: nothing in run_function.proto uses them
            msg = f"unexpected wire type {wire_type} for field {number}"
            raise DecodeError(msg)
        if number == 0 or stop > end:
            msg = f"field {number} runs past the end of its message"
            raise DecodeError(msg)
        yield _Field(number=number, start=begin, value=pos, end=stop)
        pos = stop


def request(data: bytes) -> fnv1.RunFunctionRequest:
    """The request without its fleet: meta, desired, input, context, the observed composite alone,
    and the names of the required resources (their items left out). DecodeError when it is not one."""
    slim = fnv1.RunFunctionRequest()
    for f in _fields(data):
        if f.number in _REQUEST_KEPT:
            slim.MergeFromString(data[f.start : f.end])
        elif f.number == _REQUEST_OBSERVED:
            for part in _fields(data, f.value, f.end):
                if part.number == _STATE_COMPOSITE:
                    slim.observed.composite.MergeFromString(data[part.value : part.end])
        elif f.number == _REQUEST_REQUIRED:
            slim.required_resources[_map_key(data, f)].SetInParent()
    return slim


@dataclass(frozen=True, slots=True)
class Answer:
    """What a response says, for the log: its results and conditions, and how many resources it composes."""

    response: fnv1.RunFunctionResponse  # meta, results and conditions only
    composed: int


def response(data: bytes) -> Answer:
    """The response without its desired state, which is only counted. DecodeError when it is not one."""
    slim = fnv1.RunFunctionResponse()
    composed: set[str] = set()  # a key sent twice is one entry, as parsing would make it
    for f in _fields(data):
        if f.number in _RESPONSE_KEPT:
            slim.MergeFromString(data[f.start : f.end])
        elif f.number == _RESPONSE_DESIRED:
            composed.update(
                _map_key(data, part) for part in _fields(data, f.value, f.end) if part.number == _STATE_RESOURCES
            )
    return Answer(response=slim, composed=len(composed))


def _map_key(data: bytes, entry: _Field) -> str:
    """The string key of a map entry ("" when absent, as protobuf reads it); its value is skipped."""
    key = ""
    for part in _fields(data, entry.value, entry.end):
        if part.number == _MAP_KEY:
            try:
                key = data[part.value : part.end].decode()
            except UnicodeDecodeError as e:
                msg = f"a map key is not UTF-8: {e}"
                raise DecodeError(msg) from e
    return key


# Placing a replica and composing its ModelReplica costs about what reading 3 KiB of fleet does
# (1,024 replicas of a small template: ~0.2 s; a fleet: ~70 ms per MiB), besides its template.
_REPLICA_BYTES = 3 * 1024
_MOST_REPLICAS = 1024  # the XRD's maximum: more are refused before any is placed


def weight(data: bytes) -> int:
    """What a request makes its worker read and build, estimated in bytes of fleet it is worth: the
    request, plus for a ModelDeployment each replica's work and its copy of the template, the copies
    up to the largest answer a call composes (the handler stops there). DecodeError when it is not
    a request."""
    fields = request(data).observed.composite.resource.fields
    spec = fields.get("spec")  # .get: bracket access would insert the key
    kind = fields.get("kind")
    if spec is None or kind is None or kind.string_value != names.KIND_DEPLOYMENT:
        return len(data)
    if spec.WhichOneof("kind") != "struct_value":
        return len(data)
    replicas = spec.struct_value.fields.get("replicas")
    template = spec.struct_value.fields.get("template")
    if replicas is None or template is None or replicas.WhichOneof("kind") != "number_value":
        return len(data)
    count = int(min(max(replicas.number_value, 0.0), _MOST_REPLICAS))
    copies = min(count * template.ByteSize(), limits.MAX_RESPONSE_BYTES)
    return len(data) + copies + count * _REPLICA_BYTES
