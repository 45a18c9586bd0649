"""Worst-case cost of a checked DRA selector, estimated before it ever runs.

The model follows cel-go's estimator as Kubernetes uses it: one unit per variable access,
field selection and function call; list and map literals cost a base plus their elements;
string and list operations cost a tenth of a unit per element or byte they touch; a
comprehension costs its range, then (condition + step) per element of the range. Sizes are
upper bounds from the Kubernetes DRA limits on the `device` variable (32 domains of 32
attributes, attribute strings of 64 bytes), literal sizes, and sizes derived along the tree,
so string and list blow-ups through nested comprehensions are charged what they could cost.

Comprehensions only come from macros (`all`, `exists`, `exists_one`, `map`, `filter`,
`cel.bind`), whose accumulator grows by at most one element per iteration; that keeps the
estimate one pass over the tree. The walk stops as soon as the running total passes the
budget, so adversarial selectors are rejected in time linear in their length.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from modelplane.devices.ast import Checked, Node

# Kubernetes DRA bounds (resource.k8s.io): attributes+capacities per device, string lengths.
_MAX_ENTRIES = 32
_MAX_DOMAIN = 63
_MAX_ID = 32
_MAX_VALUE = 64
_LIST_BASE = 10
_MAP_BASE = 30
_TRAVERSAL = 0.1  # cost per byte or element touched


class BudgetExceeded(Exception):  # noqa: N818 - a signal, not an error kind
    """The estimate passed the budget; the caller reports it."""


@dataclass(frozen=True, slots=True)
class Size:
    """Upper bounds of a value: its length (bytes, elements or entries) and its parts."""

    length: int = 0
    item: Size | None = None  # list element / map value
    key: Size | None = None  # map key (what a comprehension over a map iterates)
    fields: Mapping[str, Size] = field(default_factory=lambda: MappingProxyType({}))

    def select(self, name: str) -> Size:
        return self.fields.get(name) or self.item or _SCALAR


_SCALAR = Size(_MAX_VALUE)
_ATTRIBUTES = Size(_MAX_ENTRIES, item=Size(_MAX_ENTRIES, item=_SCALAR, key=Size(_MAX_ID)), key=Size(_MAX_DOMAIN))
DEVICE = Size(
    3,
    fields=MappingProxyType({"driver": Size(_MAX_DOMAIN), "attributes": _ATTRIBUTES, "capacity": _ATTRIBUTES}),
)


def _touch(length: int) -> int:
    return math.ceil(length * _TRAVERSAL)


class _Estimator:
    def __init__(self, checked: Checked, budget: int) -> None:
        self._overloads = checked.overloads
        self._budget = budget
        self.total = 0

    def charge(self, units: int) -> None:
        self.total += units
        if self.total > self._budget:
            raise BudgetExceeded

    def size(self, node: Node, scope: Mapping[str, Size], repeat: int = 1) -> Size:
        """Charge `node` evaluated `repeat` times and return its size bound."""
        match node.kind:
            case "const":
                value = node.value
                return Size(len(value)) if isinstance(value, str | bytes) else Size(8)
            case "ident":
                self.charge(repeat)
                return scope.get(node.name, _SCALAR)
            case "select":
                assert node.target is not None
                operand = self.size(node.target, scope, repeat)
                self.charge(repeat)
                return Size(1) if node.test_only else operand.select(node.name)
            case "list":
                items = [self.size(element, scope, repeat) for element in node.args]
                self.charge(repeat * _LIST_BASE)
                return Size(len(items), item=_widest(items))
            case "map":
                parts = [self.size(part, scope, repeat) for part in node.args]
                self.charge(repeat * _MAP_BASE)
                return Size(len(parts) // 2, key=_widest(parts[0::2]), item=_widest(parts[1::2]))
            case "comprehension":
                return self._comprehension(node, scope, repeat)
            case _:
                return self._call(node, scope, repeat)

    def _comprehension(self, node: Node, scope: Mapping[str, Size], repeat: int) -> Size:
        iter_range, accu_init, condition, step_node, result = (
            node.iter_range,
            node.accu_init,
            node.loop_condition,
            node.loop_step,
            node.result,
        )
        if iter_range is None or accu_init is None or condition is None or step_node is None or result is None:
            msg = f"comprehension {node.id} is incomplete"
            raise ValueError(msg)
        over = self.size(iter_range, scope, repeat)
        init = self.size(accu_init, scope, repeat)
        iterations = over.length
        element = over.key if over.key is not None else (over.item or _SCALAR)
        # Macro accumulators grow by at most one element per iteration.
        grown = Size(init.length + iterations, item=init.item)
        inner = {**scope, node.name: element, node.accu_var: grown}
        self.size(condition, inner, repeat * iterations)
        step = self.size(step_node, inner, repeat * iterations)
        final = init if not iterations else Size(init.length + iterations, item=_widest([init.item, step.item]))
        return self.size(result, {**scope, node.accu_var: final}, repeat)

    def _call(self, node: Node, scope: Mapping[str, Size], repeat: int) -> Size:
        target = self.size(node.target, scope, repeat) if node.target is not None else None
        args = [self.size(arg, scope, repeat) for arg in node.args]
        overloads = self._overloads.get(node.id, ())
        units, result = _call_cost(node.name, overloads, target, args)
        self.charge(repeat * units)
        return result


def _call_cost(name: str, overloads: tuple[str, ...], target: Size | None, args: list[Size]) -> tuple[int, Size]:
    """(cost of one call, size of its result) for the functions the environment declares."""
    receiver = target or (args[0] if args else _SCALAR)
    operands = [*([target] if target else []), *args]
    if name == "_+_" and any(o in ("add_string", "add_bytes", "add_list") for o in overloads):
        length = sum(operand.length for operand in operands)
        return 1 + _touch(length), Size(length, item=_widest([operand.item for operand in operands]))
    if name in ("_==_", "_!=_", "_<_", "_<=_", "_>_", "_>=_"):
        return 1 + _touch(max(operand.length for operand in operands)), Size(1)
    if name == "@in":
        container = args[-1]
        return 1 + (container.length if any(o.startswith("in_list") for o in overloads) else 0), Size(1)
    if name == "_[_]":
        container = args[0]
        return 1, container.item or _SCALAR
    if name == "matches":
        pattern = args[-1]
        return 1 + _touch(receiver.length) * max(1, _touch(pattern.length)), Size(1)
    if name in ("contains", "startsWith", "endsWith", "quantity", "isQuantity", "semver", "isSemver"):
        return 1 + _touch(max(operand.length for operand in operands)), Size(_MAX_VALUE)
    if name in ("string", "bytes"):
        return 1 + _touch(receiver.length), Size(max(receiver.length, 32))
    if name == "dyn":
        return 1, receiver
    return 1, Size(_MAX_VALUE)


def _widest(sizes: Sequence[Size | None]) -> Size | None:
    present = [size for size in sizes if size is not None]
    if not present:
        return None
    return Size(
        max(size.length for size in present),
        item=_widest([size.item for size in present]),
        key=_widest([size.key for size in present]),
    )


def estimate(checked: Checked, budget: int) -> int:
    """Worst-case cost of the expression; raises BudgetExceeded as soon as it passes `budget`."""
    estimator = _Estimator(checked, budget)
    estimator.size(checked.root, {"device": DEVICE})
    return estimator.total
