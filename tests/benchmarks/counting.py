"""Work counters around one schedule() call, and the bound CEL evaluations must stay under.

schedule() builds its own DeviceMatcher and exposes no counters, so `counted()` swaps in
counting wrappers for the duration of a call: the matcher's `cel_evaluations`, engine-on-pool
candidates examined (`engine_option`), cluster filter verdicts (`FilterRunner.status`) and pool
assignment searches (`fit.assign`). The names are checked up front, so a refactor that moves them
fails loudly here rather than silently counting zero.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from modelplane import devices
from modelplane.model import Cluster, Deployment
from modelplane.scheduler import engines, filters

# The package re-exports the function under the module's name, so fetch the module itself.
schedule_module = importlib.import_module("modelplane.scheduler.schedule")


@dataclass(frozen=True, slots=True, kw_only=True)
class Counts:
    cel_evaluations: int  # CEL programs actually run
    engine_candidates: int  # (cluster, engine, pool) options examined
    cluster_verdicts: int  # filter chains run for a cluster
    fit_searches: int  # pool-assignment searches (capacity filter)


class _Tally:
    def __init__(self) -> None:
        self.matchers: list[devices.DeviceMatcher] = []
        self.engine_candidates = 0
        self.cluster_verdicts = 0
        self.fit_searches = 0

    def counts(self) -> Counts:
        return Counts(
            cel_evaluations=sum(m.cel_evaluations for m in self.matchers),
            engine_candidates=self.engine_candidates,
            cluster_verdicts=self.cluster_verdicts,
            fit_searches=self.fit_searches,
        )


def _counting(fn: Callable[..., Any], bump: Callable[[], None]) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        bump()
        return fn(*args, **kwargs)

    return wrapper


@contextmanager
def counted() -> Iterator[Callable[[], Counts]]:
    """Count the work of every schedule() call inside the block; yields a function reading the totals."""
    tally = _Tally()
    base = schedule_module.DeviceMatcher

    class CountingMatcher(base):  # type: ignore[valid-type, misc]
        def __init__(self) -> None:
            super().__init__()
            tally.matchers.append(self)

    def more_candidates() -> None:
        tally.engine_candidates += 1

    def more_verdicts() -> None:
        tally.cluster_verdicts += 1

    def more_searches() -> None:
        tally.fit_searches += 1

    patches: list[tuple[Any, str, Any]] = [
        (schedule_module, "DeviceMatcher", CountingMatcher),
        (engines, "engine_option", _counting(engines.engine_option, more_candidates)),
        (filters.FilterRunner, "status", _counting(filters.FilterRunner.status, more_verdicts)),
        (filters, "assign", _counting(filters.assign, more_searches)),
    ]
    saved = [(owner, name, getattr(owner, name)) for owner, name, _ in patches]
    try:
        for owner, name, value in patches:
            setattr(owner, name, value)
        yield tally.counts
    finally:
        for owner, name, value in saved:
            setattr(owner, name, value)


def selectors_of(deployment: Deployment) -> frozenset[str]:
    return frozenset(s for e in deployment.engines for m in e.members for r in m.device_requests for s in r.selectors)


def distinct_devices(clusters: Sequence[Cluster]) -> frozenset[Any]:
    """Device contents as CEL sees them: driver, attributes and capacity (never the name or count)."""
    return frozenset(
        (
            d.driver,
            tuple(sorted((k, a.type.value, a.value) for k, a in d.attributes.items())),
            tuple(sorted(d.capacity.items())),
        )
        for c in clusters
        for p in c.pools
        for d in p.devices
    )


def distinct_pairs(deployment: Deployment, clusters: Sequence[Cluster]) -> int:
    """The design's bound on CEL evaluations: distinct (device content, selector) pairs."""
    return len(distinct_devices(clusters)) * len(selectors_of(deployment))


def naive_evaluations(deployment: Deployment, clusters: Sequence[Cluster], replicas: int) -> int:
    """Without memoisation: every selector against every device of every pool, once per replica placed."""
    devices_in_fleet = sum(len(p.devices) for c in clusters for p in c.pools)
    return max(replicas, 1) * devices_in_fleet * len(selectors_of(deployment))
