"""The checked CEL AST that cel-cpp compiled, decoded from its serialized form.

cel-expr-python exposes a compiled expression only as a serialized `google.protobuf.Any`
holding a `cel.expr.CheckedExpr`. lib/ stays free of protobuf, so this decodes the few
messages the cost estimator reads straight from the wire format: macros are already expanded
into comprehensions, and every call carries the overload ids the type checker resolved.
Field numbers are those of cel-spec's syntax.proto and checked.proto.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

# Wire types.
_VARINT, _I64, _LEN, _I32 = 0, 1, 2, 5


@dataclass(frozen=True, slots=True)
class Node:
    """One expression node. `kind` is const | ident | select | call | list | map | comprehension."""

    id: int
    kind: str
    name: str = ""  # ident name, select field, call function, comprehension iter var
    value: object = None  # const value (str/bytes/int/float/bool/None)
    const_kind: str = ""  # const only: null | bool | int | uint | double | string | bytes | duration | timestamp
    target: Node | None = None  # select operand, call receiver
    args: tuple[Node, ...] = ()  # call args, list elements, map keys and values interleaved
    test_only: bool = False  # select inside has()
    # comprehension parts
    accu_var: str = ""
    iter_range: Node | None = None
    accu_init: Node | None = None
    loop_condition: Node | None = None
    loop_step: Node | None = None
    result: Node | None = None


@dataclass(frozen=True, slots=True)
class Checked:
    root: Node
    overloads: dict[int, tuple[str, ...]] = field(default_factory=dict[int, tuple[str, ...]])


def _fields(data: bytes) -> list[tuple[int, object]]:
    out: list[tuple[int, object]] = []
    pos = 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        value: object
        if wire == _VARINT:
            value, pos = _varint(data, pos)
        elif wire == _LEN:
            length, pos = _varint(data, pos)
            value, pos = data[pos : pos + length], pos + length
        elif wire == _I64:
            value, pos = data[pos : pos + 8], pos + 8
        elif wire == _I32:
            value, pos = data[pos : pos + 4], pos + 4
        else:
            msg = f"unsupported wire type {wire}"
            raise ValueError(msg)
        out.append((number, value))
    return out


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return result, pos


def _bytes(value: object) -> bytes:
    assert isinstance(value, bytes)
    return value


def decode(serialized: bytes) -> Checked:
    """Decode `Expression.serialize()` (an Any wrapping a CheckedExpr)."""
    payload = next(_bytes(v) for n, v in _fields(serialized) if n == 2)  # noqa: PLR2004 - Any.value
    root: Node | None = None
    overloads: dict[int, tuple[str, ...]] = {}
    for number, value in _fields(payload):
        if number == 4:  # noqa: PLR2004 - CheckedExpr.expr
            root = _expr(_bytes(value))
        elif number == 2:  # noqa: PLR2004 - CheckedExpr.reference_map entry
            key, ids = 0, []
            for n, v in _fields(_bytes(value)):
                if n == 1:
                    key = int(v)  # type: ignore[arg-type]
                elif n == 2:  # noqa: PLR2004
                    ids = [_bytes(x).decode() for m, x in _fields(_bytes(v)) if m == 3]  # noqa: PLR2004
            overloads[key] = tuple(ids)
    if root is None:
        msg = "serialized expression has no body"
        raise ValueError(msg)
    return Checked(root=root, overloads=overloads)


def _expr(data: bytes) -> Node:
    node_id = 0
    for number, value in _fields(data):
        if number == 2:  # noqa: PLR2004 - Expr.id
            node_id = int(value)  # type: ignore[arg-type]
        elif number == 3:  # noqa: PLR2004
            kind, const = _const(_bytes(value))
            return Node(node_id, "const", value=const, const_kind=kind)
        elif number == 4:  # noqa: PLR2004
            return Node(node_id, "ident", name=_string(_bytes(value), 1))
        elif number == 5:  # noqa: PLR2004
            return _select(node_id, _bytes(value))
        elif number == 6:  # noqa: PLR2004
            return _call(node_id, _bytes(value))
        elif number == 7:  # noqa: PLR2004
            elements = tuple(_expr(_bytes(v)) for n, v in _fields(_bytes(value)) if n == 1)
            return Node(node_id, "list", args=elements)
        elif number == 8:  # noqa: PLR2004
            return _struct(node_id, _bytes(value))
        elif number == 9:  # noqa: PLR2004
            return _comprehension(node_id, _bytes(value))
    msg = f"expression {node_id} has no kind"
    raise ValueError(msg)


def _string(data: bytes, number: int) -> str:
    return next((_bytes(v).decode() for n, v in _fields(data) if n == number), "")


# Constant.constant_kind field numbers (syntax.proto).
_CONST_KINDS = {
    1: "null",
    2: "bool",
    3: "int",
    4: "uint",
    5: "double",
    6: "string",
    7: "bytes",
    8: "duration",
    9: "timestamp",
}


def _const(data: bytes) -> tuple[str, object]:
    for number, value in _fields(data):
        kind = _CONST_KINDS.get(number, "")
        if number in (6, 7):  # string, bytes
            raw = _bytes(value)
            return kind, raw.decode() if number == 6 else raw  # noqa: PLR2004
        if number == 2:  # noqa: PLR2004
            return kind, bool(value)
        if number == 3:  # noqa: PLR2004 - int64, two's complement on the wire
            signed = int(value)  # type: ignore[arg-type]
            return kind, signed - (1 << 64) if signed >= 1 << 63 else signed
        if number == 4:  # noqa: PLR2004
            return kind, int(value)  # type: ignore[arg-type]
        if number == 5:  # noqa: PLR2004
            return kind, struct.unpack("<d", _bytes(value))[0]
        if kind:
            return kind, None
    return "null", None


def _select(node_id: int, data: bytes) -> Node:
    operand: Node | None = None
    name, test_only = "", False
    for number, value in _fields(data):
        if number == 1:
            operand = _expr(_bytes(value))
        elif number == 2:  # noqa: PLR2004
            name = _bytes(value).decode()
        elif number == 3:  # noqa: PLR2004
            test_only = bool(value)
    return Node(node_id, "select", name=name, target=operand, test_only=test_only)


def _call(node_id: int, data: bytes) -> Node:
    target: Node | None = None
    name = ""
    args: list[Node] = []
    for number, value in _fields(data):
        if number == 1:
            target = _expr(_bytes(value))
        elif number == 2:  # noqa: PLR2004
            name = _bytes(value).decode()
        elif number == 3:  # noqa: PLR2004
            args.append(_expr(_bytes(value)))
    return Node(node_id, "call", name=name, target=target, args=tuple(args))


def _struct(node_id: int, data: bytes) -> Node:
    parts: list[Node] = []
    for number, value in _fields(data):
        if number == 2:  # noqa: PLR2004 - entries
            entry = dict(_fields(_bytes(value)))
            if 3 in entry:  # noqa: PLR2004 - map_key
                parts.append(_expr(_bytes(entry[3])))
            parts.append(_expr(_bytes(entry[4])))
    return Node(node_id, "map", args=tuple(parts))


def _comprehension(node_id: int, data: bytes) -> Node:
    parts: dict[int, object] = dict(_fields(data))

    def sub(number: int) -> Node | None:
        return _expr(_bytes(parts[number])) if number in parts else None

    return Node(
        node_id,
        "comprehension",
        name=_bytes(parts.get(1, b"")).decode(),
        accu_var=_bytes(parts.get(3, b"")).decode(),
        iter_range=sub(2),
        accu_init=sub(4),
        loop_condition=sub(5),
        loop_step=sub(6),
        result=sub(7),
    )
