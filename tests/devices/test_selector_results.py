"""Selector results shared across matchers: an unchanged fleet is not evaluated again; the cache is bounded by bytes."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from modelplane.devices import DeviceMatcher, SelectorResults

from tests.devices.factories import device, member, pool, request

NVIDIA = 'device.driver == "gpu.nvidia.com"'
BIG = 'device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("40Gi")) >= 0'
ENTRY = 160  # bytes one cached bool outcome is charged


@dataclass(frozen=True)
class Case:
    name: str
    entries: int  # the budget, in entries of a bool outcome
    passes: tuple[tuple[str, ...], ...]  # per pass, the device kinds (by memory size) it matches against
    want_evaluations: tuple[int, ...]  # CEL evaluations per pass
    want_size: int


CASES = [
    Case(
        name="a second pass over the same fleet evaluates nothing",
        entries=100,
        passes=(("80Gi", "141Gi"), ("80Gi", "141Gi")),
        want_evaluations=(4, 0),
        want_size=4,
    ),
    Case(
        name="a new device kind costs only its own evaluations",
        entries=100,
        passes=(("80Gi",), ("80Gi", "192Gi")),
        want_evaluations=(2, 2),
        want_size=4,
    ),
    Case(
        name="past the limit the oldest results are evicted and evaluated again",
        entries=2,
        passes=(("80Gi", "141Gi"), ("80Gi",)),
        want_evaluations=(4, 2),
        want_size=2,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_shared_results_across_passes(case: Case) -> None:
    results = SelectorResults(max_bytes=case.entries * ENTRY)
    the_member = member(request("gpu", NVIDIA, BIG))
    evaluations: list[int] = []
    for kinds in case.passes:
        matcher = DeviceMatcher(results=results)
        for memory in kinds:
            matcher.match_member(the_member, pool(device(f"gpu-{memory}", capacity={"memory": memory})))
        evaluations.append(matcher.cel_evaluations)
    assert (tuple(evaluations), len(results)) == (case.want_evaluations, case.want_size)


@dataclass(frozen=True)
class BudgetCase:
    name: str
    selectors: int  # distinct selectors, each matched against the same two device kinds
    want_entries: int
    want_bytes: int


BUDGET_CASES = [
    BudgetCase("within the budget every outcome is kept", selectors=5, want_entries=10, want_bytes=10 * ENTRY),
    BudgetCase("past the budget the bytes stay under it", selectors=500, want_entries=64, want_bytes=64 * ENTRY),
]


@pytest.mark.parametrize("case", BUDGET_CASES, ids=lambda c: c.name)
def test_the_results_cache_stays_within_its_byte_budget(case: BudgetCase) -> None:
    results = SelectorResults(max_bytes=64 * ENTRY)
    matcher = DeviceMatcher(results=results)
    for i in range(case.selectors):
        the_member = member(request("gpu", f'device.driver != "x{i}"'))
        for memory in ("80Gi", "141Gi"):
            matcher.match_member(the_member, pool(device(f"gpu-{memory}", capacity={"memory": memory})))
    assert (len(results), results.bytes) == (case.want_entries, case.want_bytes)


def test_an_error_outcome_is_charged_its_text() -> None:
    results = SelectorResults()
    matcher = DeviceMatcher(results=results)
    matcher.match_member(member(request("gpu", 'device.attributes["gpu.nvidia.com"].absent == 1')), pool(device()))
    error = 'no such key "absent"'
    assert (len(results), results.bytes) == (1, ENTRY + len(error))
