"""DRA CEL device selectors: compile once, evaluate against devices; an evaluation error is a value.

Semantics follow Kubernetes `resource.k8s.io/v1` selectors: the variable `device` has `driver`,
`attributes["<domain>"].<name>` and `capacity["<domain>"].<name>`, plus the Kubernetes
`quantity` and `semver` libraries and `cel.bind`. A selector that does not parse, can never be a
bool (static_types), is longer than the Kubernetes limit, or whose worst-case cost exceeds the
Kubernetes budget raises `CelCompileError` at compile time.

Evaluating gives True, False, or the error text. Kubernetes' allocator does not treat a CEL
runtime error as a mismatch: it fails the claim with the error. So an error never matches here
either, and the device matcher tells "failed on every device" apart from "matched no device".
A domain the device does not have reads as an empty map, as in Kubernetes (see lookups).

Runtime: cel-cpp through `cel-expr-python`, ~8 us per evaluation against ~670 us for the
pure-Python `celpy`. cel-cpp cannot carry Python objects as values, hence the tagged-map encoding
of quantities and versions in `library`. Compiled programs take ~10x their serialized size in
memory, so the compile cache is bounded by bytes and keyed by digests.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Any

from modelplane.devices import library
from modelplane.devices.ast import decode
from modelplane.devices.cost import BudgetExceeded, estimate
from modelplane.devices.lookups import NONE, Lookups, constant_lookups
from modelplane.devices.memo import ByteBoundedCache, digest
from modelplane.devices.static_types import TypeMismatch, check
from modelplane.model import Device

# Kubernetes resource.k8s.io: CELSelectorExpressionMaxLength and CELSelectorExpressionMaxCost.
MAX_EXPRESSION_LENGTH = 10 * 1024
MAX_COST = 1_000_000
COMPILED_BYTES = 32 * 1024 * 1024  # budget of the compile cache
_PROGRAM_OVERHEAD = 8 * 1024  # measured: a program takes ~8 KiB plus ~10x its serialized size
_MAX_DETAIL = 300  # characters of an evaluation error kept

Outcome = bool | str  # True, False, or why evaluation failed


class CelCompileError(Exception):
    """A selector does not compile, or could cost more than the Kubernetes budget."""

    def __init__(self, detail: str) -> None:
        self.detail = detail
        super().__init__(detail)


@cache
def _env() -> Any:
    """One environment per process, built on first use."""
    return library.new_env()


_BOOL: Any = library.cel.Type.BOOL
_ERROR: Any = library.cel.Type.ERROR


@dataclass(frozen=True, slots=True, eq=False)
class CompiledSelector:
    """A compiled selector; `digest` identifies its expression in caches."""

    program: Any
    digest: bytes
    cost: int = 0  # estimated worst-case CEL cost
    lookups: Lookups = NONE  # domains read as empty maps when the device lacks them

    def evaluate(self, device: Device) -> Outcome:
        """Evaluate against one device (the matcher shares activations instead)."""
        try:
            value = library.device_value(device)
        except ValueError as error:
            return f"the device's own values do not parse: {error}"
        return self.evaluate_activation(activation(value, missing_domains(value, self.lookups)))

    def evaluate_activation(self, prepared: Any) -> Outcome:
        """Evaluate against a prepared `activation`."""
        try:
            result = self.program.eval(prepared)
        except (RuntimeError, ValueError, TypeError) as error:
            return runtime_detail(str(error))
        kind = result.type()
        if kind == _BOOL:
            return result.value() is True
        if kind == _ERROR:
            return runtime_detail(str(result.value()))
        return f"the result is {kind.name().lower()}, not bool"


def missing_domains(value: dict[str, Any], lookups: Lookups) -> Lookups:
    """The looked-up domains this device value lacks (what its activation must add as empty maps)."""
    if not lookups:
        return NONE
    return Lookups(
        attributes=lookups.attributes.difference(value["attributes"]),
        capacity=lookups.capacity.difference(value["capacity"]),
    )


def activation(value: dict[str, Any], missing: Lookups = NONE) -> Any:
    """The CEL activation binding `device` to `value`, with `missing` domains as empty maps."""
    if missing:
        empty: dict[str, Any] = {}
        value = {
            **value,
            "attributes": {**value["attributes"], **dict.fromkeys(missing.attributes, empty)},
            "capacity": {**value["capacity"], **dict.fromkeys(missing.capacity, empty)},
        }
    return _env().Activation({"device": value})


_STATUS_PREFIX = re.compile(r"^[A-Z_]+: ")
_MISSING_KEY = re.compile(r'^Key not found in map : "(.*)"$', re.DOTALL)


def runtime_detail(message: str) -> str:
    """One readable line from a cel-cpp evaluation error."""
    detail = _STATUS_PREFIX.sub("", message.strip())
    missing = _MISSING_KEY.match(detail)
    if missing:
        detail = f'no such key "{missing[1]}"'
    detail = " ".join(detail.split())
    return detail if len(detail) <= _MAX_DETAIL else detail[: _MAX_DETAIL - 3] + "..."


_cache: ByteBoundedCache[CompiledSelector | CelCompileError] = ByteBoundedCache(max_bytes=COMPILED_BYTES)


def compile_selector(expression: str) -> CompiledSelector:
    """Compile (or fetch from the cache) one selector expression."""
    key = digest(expression)
    cached = _cache.get(key)
    if cached is None:
        try:
            cached, size = _compile(expression, key)
        except CelCompileError as error:
            cached, size = error, 256 + len(error.detail)
        _cache.put(key, cached, size)
    if isinstance(cached, CelCompileError):
        raise CelCompileError(cached.detail)
    return cached


def _compile(expression: str, key: bytes) -> tuple[CompiledSelector, int]:
    if len(expression) > MAX_EXPRESSION_LENGTH:
        msg = f"expression is {len(expression)} characters long, over the limit of {MAX_EXPRESSION_LENGTH}"
        raise CelCompileError(msg)
    try:
        program = _env().compile(expression)
    except RuntimeError as error:
        raise CelCompileError(_compile_detail(str(error))) from None
    serialized = program.serialize()
    checked = decode(serialized)
    try:
        cost = estimate(checked, MAX_COST)
    except BudgetExceeded:
        msg = f"estimated worst-case cost exceeds the Kubernetes budget of {MAX_COST}; simplify the expression"
        raise CelCompileError(msg) from None
    if program.return_type() not in (library.cel.Type.BOOL, library.cel.Type.DYN):
        msg = f"must evaluate to bool, not {program.return_type().name().lower()}"
        raise CelCompileError(msg)
    try:
        check(checked)
    except TypeMismatch as error:
        raise CelCompileError(error.detail) from None
    selector = CompiledSelector(program=program, digest=key, cost=cost, lookups=constant_lookups(checked))
    return selector, _PROGRAM_OVERHEAD + 10 * len(serialized)


def _compile_detail(message: str) -> str:
    # cel-cpp prefixes a status code and appends one, and follows each error with the source line
    # and a caret line; a condition message wants one line, so keep only the error lines.
    detail = message.removeprefix("INVALID_ARGUMENT: ").removesuffix(" [INVALID_ARGUMENT]")
    errors = [line.removeprefix("ERROR: ").strip() for line in detail.splitlines() if not line.startswith(" |")]
    return f"compilation failed: {'; '.join(e for e in errors if e)}"
