"""Why a device request matches no device: the words of the diagnosis and of InvalidNodeSelector.

A request's selectors are ANDed and evaluated in order, stopping at the first that does not hold,
as Kubernetes' allocator does. Two questions are answered from those outcomes (each memoised by
the matcher, so asking costs no evaluation twice):

- `failing_everywhere`: the first selector that failed to evaluate on every device kind it
  reached, fleet-wide. Kubernetes fails a claim on a CEL runtime error, so such a selector can
  never be allocated anywhere: it is an invalid selector, not a scarcity.
- `why_unmatched`: on one cluster, the first selector no device passes (with its evaluation
  errors and the attribute names the devices do publish, for typos), or a count larger than any
  matching device offers per node.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from modelplane.devices.cel import CompiledSelector, Outcome, compile_selector
from modelplane.errors import short_expression
from modelplane.model import Device, DeviceRequest

_MAX_NAMES = 16  # attribute and capacity names listed in a hint
_MISSING_KEY = re.compile(r'no such key "([^"]*)"')
_DOMAIN_READ = re.compile(r'(?:attributes|capacity)\s*\[\s*"([^"]*)"\s*\]')  # the domains an expression reads


class Evaluator(Protocol):
    def outcome(self, selector: CompiledSelector, device: Device) -> Outcome: ...


@dataclass(frozen=True, slots=True)
class SelectorFailure:
    index: int  # 1-based position in the request
    expression: str
    error: str  # the first evaluation error, from the first device kind in order
    devices: int  # device kinds it was evaluated on


def failing_everywhere(evaluator: Evaluator, request: DeviceRequest, kinds: Iterable[Device]) -> SelectorFailure | None:
    """The first selector that failed on every device kind it reached; None if none did or a kind matches."""
    count = len(request.selectors)
    reached, failed = [0] * count, [0] * count
    first: list[str] = [""] * count
    for kind in kinds:
        for i, expression in enumerate(request.selectors):
            outcome = evaluator.outcome(compile_selector(expression), kind)
            reached[i] += 1
            if isinstance(outcome, str):
                failed[i] += 1
                first[i] = first[i] or outcome
            if outcome is not True:
                break
        else:
            return None  # this kind satisfies every selector
    for i in range(count):
        if reached[i] and failed[i] == reached[i]:
            return SelectorFailure(index=i + 1, expression=request.selectors[i], error=first[i], devices=reached[i])
    return None


def why_unmatched(evaluator: Evaluator, request: DeviceRequest, kinds: Sequence[Device]) -> str | None:
    """Why no device kind can serve `request` on its own; None when one can."""
    if not kinds:
        return "no pool here publishes devices"
    passing = list(kinds)
    for index, expression in enumerate(request.selectors, 1):
        selector = compile_selector(expression)
        outcomes = [(kind, evaluator.outcome(selector, kind)) for kind in passing]
        survivors = [kind for kind, outcome in outcomes if outcome is True]
        if not survivors:
            errors = [outcome for _, outcome in outcomes if isinstance(outcome, str)]
            return _no_device(index, expression, len(outcomes), errors, kinds)
        passing = survivors
    if all(kind.count < request.count for kind in passing):
        most = max(kind.count for kind in passing)
        names = ", ".join(sorted({kind.name for kind in passing}))
        return f"asks for {request.count} devices per node; the matching devices ({names}) have at most {most} per node"
    return None


def _no_device(index: int, expression: str, reached: int, errors: list[str], kinds: Sequence[Device]) -> str:
    where = f"selector {index} ({short_expression(expression)})"
    if errors and len(errors) == reached:
        head = f"{where} failed to evaluate on every device here: {errors[0]}"
    elif errors:
        head = f"no device passes {where}; it failed to evaluate on {len(errors)} of {reached}: {errors[0]}"
    else:
        head = f"no device passes {where}"
    return head + suggestion(errors[0] if errors else "", kinds, expression) + _context(expression, kinds)


def _context(expression: str, kinds: Sequence[Device]) -> str:
    """What the devices offer that the selector reads: their drivers, their attribute and capacity names."""
    parts: list[str] = []
    if "driver" in expression:
        drivers = sorted({kind.driver for kind in kinds})
        parts.append(f"devices here have driver {', '.join(drivers)}")
    if "attributes" in expression or "capacity" in expression:
        parts.append(published(kinds))
    return "".join(f"; {part}" for part in parts)


def suggestion(error: str, kinds: Sequence[Device], expression: str = "") -> str:
    """A hint when the error names a missing key: where else it is published, or a close published name.

    A domain the expression already reads is no hint: the key is missing on the devices that lack
    that domain (a GPU, for a selector written for a Synthetic NIC), and Kubernetes fails a claim on
    any device whose evaluation errs, so what helps is a guard that keeps the others out first.
    """
    missing = _MISSING_KEY.search(error)
    if missing is None:
        return ""
    key = missing[1]
    names = {_qualified(name, kind.driver) for kind in kinds for name in (*kind.attributes, *kind.capacity)}
    domains = sorted({domain for domain, name in names if name == key})
    read = set(_DOMAIN_READ.findall(expression))
    elsewhere = [domain for domain in domains if domain not in read]
    if elsewhere:
        return f" ({key} is published under {', '.join(elsewhere)})"
    if domains:
        drivers = sorted(
            {
                kind.driver
                for kind in kinds
                for name in (*kind.attributes, *kind.capacity)
                if _qualified(name, kind.driver) in {(domain, key) for domain in domains}
            }
        )
        return (
            f" (only devices of driver {', '.join(drivers)} publish {', '.join(domains)}/{key}: on the others the "
            f'selector errs; test device.driver == "{drivers[0]}" first)'
        )
    known = sorted({name for _, name in names} | {domain for domain, _ in names})
    close = difflib.get_close_matches(key, known, n=1)
    return f" (did you mean {close[0]}?)" if close else ""


def published(kinds: Sequence[Device], where: str = "here") -> str:
    """The attribute and capacity names the devices publish, by domain, bounded."""
    parts: list[str] = []
    for label, names in (
        ("attributes", {_qualified(name, kind.driver) for kind in kinds for name in kind.attributes}),
        ("capacity", {_qualified(name, kind.driver) for kind in kinds for name in kind.capacity}),
    ):
        if not names:
            continue
        shown = sorted(names)[:_MAX_NAMES]
        by_domain: dict[str, list[str]] = {}
        for domain, name in shown:
            by_domain.setdefault(domain, []).append(name)
        text = ", ".join(f"{domain}/{{{', '.join(items)}}}" for domain, items in by_domain.items())
        more = len(names) - len(shown)
        parts.append(f"{label} {text}" + (f" and {more} more" if more else ""))
    return f"devices {where} publish " + (" and ".join(parts) if parts else "no attributes or capacities")


def _qualified(name: str, driver: str) -> tuple[str, str]:
    domain, sep, rest = name.partition("/")
    return (domain, rest) if sep else (driver, name)
