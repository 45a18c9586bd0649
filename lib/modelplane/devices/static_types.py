"""Static types of a checked DRA selector, so selectors that can never yield a bool fail to compile.

cel-cpp sees `device` as a map of dyn, so it cannot tell `device.capacity["d"].memory > 5` or
`device.driver` (as a whole selector) from a valid selector; Kubernetes declares `device` as an
object with typed fields and rejects both when the selector is written. This pass gives every node
the set of kinds it may have at run time, from the DRA device shape (attributes are bool, int,
string or version; capacities are quantities) and the library's signatures, and raises TypeMismatch
when an operator or function can apply to none of them, or the whole selector cannot be a bool.

It is deliberately conservative: anything it cannot follow is `dyn` and accepted, so it never
refuses a selector Kubernetes would accept; what it lets through is still checked at run time.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import NoReturn, cast

from modelplane.devices.ast import Checked, Node

BOOL, INT, UINT, DOUBLE, STRING, BYTES, NULL = "bool", "int", "uint", "double", "string", "bytes", "null_type"
LIST, MAP, TYPE, TIMESTAMP, DURATION = "list", "map", "type", "timestamp", "duration"
QUANTITY, SEMVER, DEVICE = "quantity", "semver", "device"
DOMAINS, ATTRIBUTES, CAPACITY_DOMAINS, CAPACITIES = "attribute domains", "attributes", "capacity domains", "capacities"

Kinds = frozenset[str] | None  # None: dyn, anything
ATTRIBUTE: frozenset[str] = frozenset({BOOL, INT, STRING, SEMVER})
_NUMBERS = frozenset({INT, UINT, DOUBLE})
_ORDERED = frozenset({*_NUMBERS, STRING, BYTES, BOOL, TIMESTAMP, DURATION})
_ADDABLE = frozenset({*_NUMBERS, STRING, BYTES, LIST, TIMESTAMP, DURATION})
_SIZED = frozenset({STRING, BYTES, LIST, MAP, DOMAINS, ATTRIBUTES, CAPACITY_DOMAINS, CAPACITIES})
_CONTAINERS = frozenset({LIST, MAP, DOMAINS, ATTRIBUTES, CAPACITY_DOMAINS, CAPACITIES})
# What indexing or selecting a field of each map-like kind gives; `None` values mean dyn.
_ENTRY: Mapping[str, Kinds] = MappingProxyType(
    {
        DOMAINS: frozenset({ATTRIBUTES}),
        ATTRIBUTES: ATTRIBUTE,
        CAPACITY_DOMAINS: frozenset({CAPACITIES}),
        CAPACITIES: frozenset({QUANTITY}),
        MAP: None,
        LIST: None,
    }
)
_KEYS: Mapping[str, Kinds] = MappingProxyType(
    {DOMAINS: frozenset({STRING}), ATTRIBUTES: frozenset({STRING}), CAPACITY_DOMAINS: frozenset({STRING})}
    | {CAPACITIES: frozenset({STRING}), MAP: None, LIST: None}
)
_DEVICE_FIELDS: Mapping[str, frozenset[str]] = MappingProxyType(
    {"driver": frozenset({STRING}), "attributes": frozenset({DOMAINS}), "capacity": frozenset({CAPACITY_DOMAINS})}
)
_COMPARISONS = frozenset({"_<_", "_<=_", "_>_", "_>=_"})
_ARITHMETIC = frozenset({"_-_", "_*_", "_/_", "_%_", "-_"})
_LOGICAL = frozenset({"_&&_", "_||_", "!_", "@not_strictly_false"})
_STRING_TESTS = frozenset({"contains", "startsWith", "endsWith", "matches"})
_CONVERSIONS: Mapping[str, frozenset[str]] = MappingProxyType(
    {"int": frozenset({INT}), "uint": frozenset({UINT}), "double": frozenset({DOUBLE}), "string": frozenset({STRING})}
    | {"bytes": frozenset({BYTES}), "bool": frozenset({BOOL}), "type": frozenset({TYPE})}
    | {"timestamp": frozenset({TIMESTAMP}), "duration": frozenset({DURATION})}
)
# The Kubernetes quantity and semver libraries: (receiver kinds or None for a global, result kinds).
_LIBRARY: Mapping[str, tuple[frozenset[str] | None, frozenset[str]]] = MappingProxyType(
    {
        "quantity": (None, frozenset({QUANTITY})),
        "isQuantity": (None, frozenset({BOOL})),
        "semver": (None, frozenset({SEMVER})),
        "isSemver": (None, frozenset({BOOL})),
        "compareTo": (frozenset({QUANTITY, SEMVER}), frozenset({INT})),
        "isGreaterThan": (frozenset({QUANTITY, SEMVER}), frozenset({BOOL})),
        "isLessThan": (frozenset({QUANTITY, SEMVER}), frozenset({BOOL})),
        "major": (frozenset({SEMVER}), frozenset({INT})),
        "minor": (frozenset({SEMVER}), frozenset({INT})),
        "patch": (frozenset({SEMVER}), frozenset({INT})),
        "sign": (frozenset({QUANTITY}), frozenset({INT})),
        "asInteger": (frozenset({QUANTITY}), frozenset({INT})),
        "isInteger": (frozenset({QUANTITY}), frozenset({BOOL})),
        "asApproximateFloat": (frozenset({QUANTITY}), frozenset({DOUBLE})),
        "add": (frozenset({QUANTITY}), frozenset({QUANTITY})),
        "sub": (frozenset({QUANTITY}), frozenset({QUANTITY})),
    }
)
_SYMBOLS = MappingProxyType(
    {"_<_": "<", "_<=_": "<=", "_>_": ">", "_>=_": ">=", "_-_": "-", "_*_": "*", "_/_": "/", "_%_": "%"}
    | {"-_": "unary -", "_&&_": "&&", "_||_": "||", "!_": "!", "_+_": "+", "_==_": "==", "_!=_": "!="}
)


class TypeMismatch(Exception):  # noqa: N818 - reported as a compile error by the caller
    """No run-time value could make this selector well typed; `detail` says where."""

    def __init__(self, detail: str) -> None:
        self.detail = detail
        super().__init__(detail)


def describe(kinds: Kinds) -> str:
    if kinds is None:
        return "dyn"
    if kinds == ATTRIBUTE:
        return "an attribute (bool, int, string or version)"
    return " or ".join(sorted(kinds))


def _fail(message: str) -> NoReturn:
    raise TypeMismatch(message)


def _allows(kinds: Kinds, wanted: frozenset[str]) -> bool:
    return kinds is None or bool(kinds & wanted)


def _union(*parts: Kinds) -> Kinds:
    out: set[str] = set()
    for part in parts:
        if part is None:
            return None
        out |= part
    return frozenset(out)


class _Checker:
    def __init__(self) -> None:
        self.scope: dict[str, Kinds] = {"device": frozenset({DEVICE})}

    def kinds(self, node: Node) -> Kinds:
        match node.kind:
            case "const":
                return frozenset({NULL if node.const_kind == "null" else node.const_kind}) if node.const_kind else None
            case "ident":
                return self.scope.get(node.name)
            case "select":
                return self._select(node)
            case "list":
                for element in node.args:
                    self.kinds(element)
                return frozenset({LIST})
            case "map":
                for part in node.args:
                    self.kinds(part)
                return frozenset({MAP})
            case "comprehension":
                return self._comprehension(node)
            case _:
                return self._call(node)

    def _select(self, node: Node) -> Kinds:
        assert node.target is not None
        operand = self.kinds(node.target)
        if node.test_only:
            if operand is not None and not operand & (_CONTAINERS | {DEVICE}):
                _fail(f"has() cannot test field {node.name!r} of {describe(operand)}")
            return frozenset({BOOL})
        return self._entry(operand, f"field {node.name!r}", field=node.name)

    def _entry(self, operand: Kinds, what: str, *, field: str | None = None) -> Kinds:
        """The kinds of `operand.field` or `operand[key]`."""
        if operand is None:
            return None
        parts: list[Kinds] = []
        for kind in operand:
            if kind == DEVICE and field is not None:
                if field not in _DEVICE_FIELDS:
                    _fail(f"device has no field {field!r} (it has driver, attributes and capacity)")
                parts.append(_DEVICE_FIELDS[field])
            elif kind in _ENTRY:
                parts.append(_ENTRY[kind])
        if not parts:
            _fail(f"{describe(operand)} has no {what}")
        return _union(*parts)

    def _comprehension(self, node: Node) -> Kinds:
        parts = (node.iter_range, node.accu_init, node.loop_condition, node.loop_step, node.result)
        if any(part is None for part in parts):
            msg = f"comprehension {node.id} is incomplete"
            raise ValueError(msg)
        iter_range, accu_init, condition, step_node, result_node = cast("tuple[Node, Node, Node, Node, Node]", parts)
        over = self.kinds(iter_range)
        if over is not None and not over & _KEYS.keys():
            _fail(f"cannot iterate over {describe(over)}")
        saved = dict(self.scope)
        self.scope[node.name] = None if over is None else _union(*(_KEYS[k] for k in over if k in _KEYS))
        init = self.kinds(accu_init)
        self.scope[node.accu_var] = init
        self.kinds(condition)
        step = self.kinds(step_node)
        self.scope[node.accu_var] = _union(init, step)
        result = self.kinds(result_node)
        self.scope = saved
        return result

    def _call(self, node: Node) -> Kinds:
        target = self.kinds(node.target) if node.target is not None else None
        args = [self.kinds(arg) for arg in node.args]
        name = node.name
        operands = ([target] if node.target is not None else []) + args
        symbol = _SYMBOLS.get(name, name)
        if name in _LOGICAL:
            for operand in operands:
                if not _allows(operand, frozenset({BOOL})):
                    _fail(f"operator {symbol} needs bool operands, not {describe(operand)}")
            return frozenset({BOOL})
        if name == "_?_:_":
            if not _allows(args[0], frozenset({BOOL})):
                _fail(f"a condition must be bool, not {describe(args[0])}")
            return _union(args[1], args[2])
        if name in ("_==_", "_!=_"):
            self._comparable(symbol, args[0], args[1])
            return frozenset({BOOL})
        if name in _COMPARISONS:
            for operand in args:
                self._ordered(symbol, operand)
            self._comparable(symbol, args[0], args[1])
            return frozenset({BOOL})
        if name == "_+_":
            return self._arithmetic(symbol, args, _ADDABLE)
        if name in _ARITHMETIC:
            return self._arithmetic(symbol, args, _NUMBERS | {TIMESTAMP, DURATION})
        if name == "_[_]":
            return self._entry(args[0], "index")
        if name == "@in":
            if not _allows(args[1], _CONTAINERS):
                _fail(f"'in' needs a list or map, not {describe(args[1])}")
            return frozenset({BOOL})
        if name == "size":
            if not all(_allows(o, _SIZED) for o in operands):
                _fail(f"size() does not apply to {describe(operands[0])}")
            return frozenset({INT})
        if name in _STRING_TESTS:
            if not _allows(operands[0], frozenset({STRING})):
                _fail(f"{name}() applies to strings, not {describe(operands[0])}")
            return frozenset({BOOL})
        if name in _CONVERSIONS:
            return _CONVERSIONS[name]
        if name in _LIBRARY:
            receiver, result = _LIBRARY[name]
            subject = operands[0] if operands else None  # `q.sign()` and `sign(q)` alike
            if receiver is not None and not _allows(subject, receiver):
                _fail(f"{name}() applies to {describe(receiver)}, not {describe(subject)}")
            return result
        return None  # dyn() and anything this pass does not model

    @staticmethod
    def _ordered(symbol: str, operand: Kinds) -> None:
        if _allows(operand, _ORDERED):
            return
        assert operand is not None
        hint = "; use compareTo(), isGreaterThan() or isLessThan()" if operand & {QUANTITY, SEMVER} else ""
        _fail(f"operator {symbol} does not order {describe(operand)}{hint}")

    @staticmethod
    def _comparable(symbol: str, left: Kinds, right: Kinds) -> None:
        if left is None or right is None or NULL in left | right:
            return
        widened = {wide for kind in left for wide in (_NUMBERS if kind in _NUMBERS else {kind})}
        if not widened & right:
            _fail(f"operator {symbol} compares {describe(left)} with {describe(right)}, which never match")

    @staticmethod
    def _arithmetic(symbol: str, operands: list[Kinds], allowed: frozenset[str]) -> Kinds:
        known = [o & allowed for o in operands if o is not None]
        for operand in operands:
            if not _allows(operand, allowed):
                _fail(f"operator {symbol} does not apply to {describe(operand)}")
        if len(known) < len(operands):
            return None
        return _union(*known)


def check(checked: Checked) -> Kinds:
    """The kinds the selector may evaluate to; raises TypeMismatch when it can never be a bool."""
    kinds = _Checker().kinds(checked.root)
    if kinds is not None and BOOL not in kinds:
        _fail(f"must evaluate to bool, not {describe(kinds)}")
    return kinds
