"""DRA device selectors (CEL) and member -> node pool device matching."""

from modelplane.devices.cel import MAX_COST, MAX_EXPRESSION_LENGTH, CelCompileError, CompiledSelector, compile_selector
from modelplane.devices.match import DeviceMatcher, MemberMatch, SelectorResults

__all__ = [
    "MAX_COST",
    "MAX_EXPRESSION_LENGTH",
    "CelCompileError",
    "CompiledSelector",
    "DeviceMatcher",
    "MemberMatch",
    "SelectorResults",
    "compile_selector",
]
