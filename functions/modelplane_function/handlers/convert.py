"""Struct <-> dict at the gRPC edge.

Every number in a protobuf Struct is a double, so `3` arrives as `3.0`. `to_dict()` turns integral
numbers back into ints while it walks the Struct (what Go prints, and what arithmetic, indexing
and formatting need); non-integral numbers stay floats. One walk does both, which is cheaper than
json_format.MessageToDict followed by a second pass.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from google.protobuf import struct_pb2


def _number(n: float) -> int | float:
    return int(n) if n.is_integer() else n


# Value's oneof field numbers. ListFields() yields the set member and its value in one C call,
# where WhichOneof plus an attribute read take two; a fleet holds millions of Values.
_STRING, _STRUCT, _NUMBER, _LIST, _BOOL = 3, 5, 2, 6, 4


def _value(v: struct_pb2.Value) -> Any:
    fields = v.ListFields()
    if not fields:
        return None
    ((field, x),) = fields
    n = field.number
    if n in (_STRING, _BOOL):
        return x
    if n == _STRUCT:
        f = x.fields
        return {k: _value(f[k]) for k in f}
    if n == _NUMBER:
        return int(x) if x.is_integer() else x
    if n == _LIST:
        return [_value(y) for y in x.values]
    return None  # null_value


def from_value(v: struct_pb2.Value) -> Any:
    """One Value as plain Python, as `to_dict` converts it."""
    return _value(v)


def to_dict(struct: struct_pb2.Struct) -> dict[str, Any]:
    """A Struct as a plain dict, integral numbers as ints."""
    f = struct.fields
    return {k: _value(f[k]) for k in f}  # iterating keys: the Mapping mixin's items() is slower


def plain(value: Any) -> Any:
    """A JSON-shaped value with integral floats turned into ints."""
    if isinstance(value, float):
        return _number(value)
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}  # pyright: ignore[reportUnknownVariableType]
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]  # pyright: ignore[reportUnknownVariableType]
    return value


def to_struct(obj: Mapping[str, Any]) -> struct_pb2.Struct:
    """A JSON-shaped mapping as a Struct.

    Struct.update, not json_format.ParseDict: the same Struct (and the same refusal of what is not
    JSON-shaped) at a third of the cost, which was most of answering with 1,024 replicas.
    """
    out = struct_pb2.Struct()
    out.update(dict(obj))
    return out


def project(struct: struct_pb2.Struct, fields: Mapping[str, Any]) -> dict[str, Any]:
    """Only `fields` of a Struct as a dict; what they do not name is never converted.

    `fields` names keys at each level (see modelplane.api.ledger.Fields): None takes the whole value,
    a mapping applies to an object, or to each item of a list.
    """
    f = struct.fields
    out: dict[str, Any] = {}
    for key, sub in fields.items():
        if key in f:  # `in` first: bracket access would insert the key
            out[key] = _value(f[key]) if sub is None else _projected(f[key], sub)
    return out


def _projected(v: struct_pb2.Value, fields: Mapping[str, Any]) -> Any:
    listed = v.ListFields()
    if listed:
        ((field, x),) = listed
        if field.number == _STRUCT:
            return project(x, fields)
        if field.number == _LIST:
            return [_projected(y, fields) for y in x.values]
    return _value(v)  # not the shape the fields name: the parser reports it
