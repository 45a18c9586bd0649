"""The attribute and capacity domains a selector looks up by a constant name.

Kubernetes gives `device.attributes["<domain>"]` (and `device.capacity[...]`) an empty map when
the device has no such domain: `has(device.attributes["amd.com"].x)` is false and
`device.attributes["amd.com"].x` fails with "no such key: x", while `"amd.com" in
device.attributes`, `size()` and iteration still see only the real domains. cel-cpp maps have no
default, so the evaluator adds an empty map for each domain a selector looks up by a constant
name. It does so only when the selector uses that map in no other way (no `in`, iteration, size,
binding or comparison of the map itself): then the added domains cannot be observed, and every
result is the one Kubernetes gives. Otherwise nothing is added, and the lookup of a missing domain
is an evaluation error.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from modelplane.devices.ast import Checked, Node

_MAPS = ("attributes", "capacity")


@dataclass(frozen=True, slots=True)
class Lookups:
    """Domains to add as empty maps, per device map ("attributes", "capacity")."""

    attributes: frozenset[str] = frozenset()
    capacity: frozenset[str] = frozenset()

    def __bool__(self) -> bool:
        return bool(self.attributes or self.capacity)


NONE = Lookups()


def _children(node: Node) -> Iterator[Node]:
    parts = (node.target, *node.args, node.iter_range, node.accu_init, node.loop_condition, node.loop_step, node.result)
    yield from (part for part in parts if part is not None)


def _device_map(node: Node) -> str | None:
    """The map's name ("attributes" or "capacity") when the node is `device.<map>`, not a has() test."""
    target = node.target
    on_device = target is not None and target.kind == "ident" and target.name == "device"
    if node.kind == "select" and not node.test_only and node.name in _MAPS and on_device:
        return node.name
    return None


def _looked_up(parent: Node, child: Node) -> str | None:
    """The domain `parent` looks up in the device map `child`, when it is a constant lookup."""
    if parent.kind == "select" and not parent.test_only and parent.target is child:
        return parent.name
    if parent.kind == "call" and parent.name == "_[_]" and parent.target is None and parent.args[0] is child:
        key = parent.args[1] if len(parent.args) > 1 else None
        if key is not None and key.kind == "const" and isinstance(key.value, str):
            return key.value
    return None


def constant_lookups(checked: Checked) -> Lookups:
    """The domains to pad for this selector (empty when padding could be observed)."""
    found: dict[str, set[str]] = {m: set() for m in _MAPS}
    unsafe: set[str] = set()
    stack: list[tuple[Node, Node | None]] = [(checked.root, None)]
    while stack:
        node, parent = stack.pop()
        if node.kind == "ident" and node.name == "device" and (parent is None or parent.kind != "select"):
            unsafe.update(_MAPS)  # `device` itself is bound or passed on: its maps could be observed
        device_map = _device_map(node)
        if device_map is not None:
            domain = _looked_up(parent, node) if parent is not None else None
            if domain is None:
                unsafe.add(device_map)
            else:
                found[device_map].add(domain)
        stack.extend((child, node) for child in _children(node))
    return Lookups(
        attributes=frozenset() if "attributes" in unsafe else frozenset(found["attributes"]),
        capacity=frozenset() if "capacity" in unsafe else frozenset(found["capacity"]),
    )
