"""Work counts of schedule() on seeded fleets: a regression guard that does not depend on timing.

The exact counts were recorded from the scheduler as it stands; a change that makes the scheduler
do more work (a lost memo, a filter run per replica per cluster, CEL per pool instead of per device
content) moves them and fails here. Whatever the counts, CEL evaluations may never exceed the
distinct (device content, selector) pairs of the fleet (design.md §7). Validation evaluates each
request's selectors on the fleet's device kinds until one kind passes them all (to tell a selector
that fails everywhere from a scarce device); those evaluations are shared with placement, and
cost at most a few more where the first kinds in name order do not match. Every cluster a round
rejects is explained by all its failing filters, so the device options and the capacity of
clusters rejected earlier (not Ready, tainted) are computed too: a bounded, per-call cost. In the
steady state the deployment still states its demand (scheduler/state.py), so the device options
of every cluster its filters admit are worked out, but no cluster's capacity is.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import pytest
from modelplane.scheduler import schedule

from tests.benchmarks.cases import Size
from tests.benchmarks.cases import case as bench_case
from tests.benchmarks.counting import Counts, counted, distinct_pairs
from tests.benchmarks.shapes import Shape


@dataclass(frozen=True)
class Case:
    name: str
    clusters: int
    existing: int
    shape: Shape
    replicas: int
    want: Counts
    steady: bool = False  # all replicas already placed and observed: nothing to bind


def _counts(evals: int, candidates: int, verdicts: int, fits: int) -> Counts:
    return Counts(cel_evaluations=evals, engine_candidates=candidates, cluster_verdicts=verdicts, fit_searches=fits)


CASES = [
    Case("one standalone replica on 10 clusters", 10, 0, Shape.STANDALONE, 1, _counts(18, 59, 11, 11)),
    Case("100 standalone replicas on 10 clusters", 10, 0, Shape.STANDALONE, 100, _counts(18, 59, 110, 110)),
    Case("100 prefill/decode replicas on 10 clusters (only 94 fit)", 10, 0, Shape.PREFILL_DECODE, 100,
         _counts(42, 118, 104, 98)),
    Case("100 standalone replicas on 100 empty clusters", 100, 0, Shape.STANDALONE, 100, _counts(19, 186, 200, 200)),
    Case("one standalone replica among 1000 existing on 100 clusters", 100, 1000, Shape.STANDALONE, 1,
         _counts(19, 186, 101, 101)),
    Case("100 standalone replicas among 1000 existing on 100 clusters", 100, 1000, Shape.STANDALONE, 100,
         _counts(19, 186, 200, 200)),
    Case("100 leader/worker replicas among 1000 existing on 100 clusters", 100, 1000, Shape.LEADER_WORKER, 100,
         _counts(32, 186, 200, 163)),
    Case("100 prefill/decode replicas among 1000 existing on 100 clusters", 100, 1000, Shape.PREFILL_DECODE, 100,
         _counts(50, 372, 200, 152)),
    Case("100 standalone replicas all placed and observed on 100 clusters filter no cluster", 100, 0,
         Shape.STANDALONE, 100, _counts(19, 183, 0, 0), steady=True),
    Case("100 prefill/decode replicas all placed and observed among 1000 existing filter no cluster", 100, 1000,
         Shape.PREFILL_DECODE, 100, _counts(48, 366, 0, 0), steady=True),
]  # fmt: skip


@cache  # both tests read the same run
def _run(case: Case) -> tuple[Counts, int]:
    c = bench_case(Size(clusters=case.clusters, existing=case.existing, new=case.replicas), case.shape)
    with counted() as read:
        schedule(*(c.steady_args() if case.steady else c.cold_args()))
        counts = read()
    return counts, distinct_pairs(c.deployment, c.world.clusters)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_work_counts_are_unchanged(case: Case) -> None:
    counts, _ = _run(case)
    assert counts == case.want


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_cel_evaluations_stay_within_distinct_device_selector_pairs(case: Case) -> None:
    counts, pairs = _run(case)
    assert counts.cel_evaluations <= pairs
