"""Selector results shared across matchers: an unchanged fleet is not evaluated again; the cache is bounded."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from modelplane.devices import DeviceMatcher, SelectorResults

from tests.devices.factories import device, member, pool, request

NVIDIA = 'device.driver == "gpu.nvidia.com"'
BIG = 'device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("40Gi")) >= 0'


@dataclass(frozen=True)
class Case:
    name: str
    limit: int
    passes: tuple[tuple[str, ...], ...]  # per pass, the device kinds (by memory size) it matches against
    want_evaluations: tuple[int, ...]  # CEL evaluations per pass
    want_size: int


CASES = [
    Case(
        name="a second pass over the same fleet evaluates nothing",
        limit=100,
        passes=(("80Gi", "141Gi"), ("80Gi", "141Gi")),
        want_evaluations=(4, 0),
        want_size=4,
    ),
    Case(
        name="a new device kind costs only its own evaluations",
        limit=100,
        passes=(("80Gi",), ("80Gi", "192Gi")),
        want_evaluations=(2, 2),
        want_size=4,
    ),
    Case(
        name="past the limit the oldest results are evicted and evaluated again",
        limit=2,
        passes=(("80Gi", "141Gi"), ("80Gi",)),
        want_evaluations=(4, 2),
        want_size=2,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_shared_results_across_passes(case: Case) -> None:
    results = SelectorResults(limit=case.limit)
    the_member = member(request("gpu", NVIDIA, BIG))
    evaluations: list[int] = []
    for kinds in case.passes:
        matcher = DeviceMatcher(results=results)
        for memory in kinds:
            matcher.match_member(the_member, pool(device(f"gpu-{memory}", capacity={"memory": memory})))
        evaluations.append(matcher.cel_evaluations)
    assert (tuple(evaluations), len(results)) == (case.want_evaluations, case.want_size)
