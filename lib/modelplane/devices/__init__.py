"""DRA device selectors (CEL) and member -> node pool device matching."""

from modelplane.devices.cel import (
    COMPILED_BYTES,
    MAX_COST,
    MAX_EXPRESSION_LENGTH,
    CelCompileError,
    CompiledSelector,
    Outcome,
    compile_selector,
)
from modelplane.devices.match import MAX_SELECTOR_TEXT, DeviceMatcher, MemberMatch
from modelplane.devices.results import RESULT_BYTES, SelectorResults

__all__ = [
    "COMPILED_BYTES",
    "MAX_COST",
    "MAX_EXPRESSION_LENGTH",
    "MAX_SELECTOR_TEXT",
    "RESULT_BYTES",
    "CelCompileError",
    "CompiledSelector",
    "DeviceMatcher",
    "MemberMatch",
    "Outcome",
    "SelectorResults",
    "compile_selector",
]
