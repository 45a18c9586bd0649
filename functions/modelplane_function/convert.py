"""Struct <-> dict at the gRPC edge.

Every number in a protobuf Struct is a double, so `3` arrives as `3.0`. `to_dict()` turns integral
numbers back into ints while it walks the Struct (what Go prints, and what arithmetic, indexing
and formatting need); non-integral numbers stay floats. One walk does both, which is cheaper than
json_format.MessageToDict followed by a second pass.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from google.protobuf import json_format, struct_pb2


def _number(n: float) -> int | float:
    return int(n) if n.is_integer() else n


def _value(v: struct_pb2.Value) -> Any:
    kind = v.WhichOneof("kind")
    if kind == "struct_value":
        return to_dict(v.struct_value)
    if kind == "string_value":
        return v.string_value
    if kind == "number_value":
        return _number(v.number_value)
    if kind == "bool_value":
        return v.bool_value
    if kind == "list_value":
        return [_value(x) for x in v.list_value.values]
    return None


def to_dict(struct: struct_pb2.Struct) -> dict[str, Any]:
    """A Struct as a plain dict, integral numbers as ints."""
    return {k: _value(v) for k, v in struct.fields.items()}


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
    """A JSON-shaped mapping as a Struct."""
    return json_format.ParseDict(dict(obj), struct_pb2.Struct())
