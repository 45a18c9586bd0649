"""Another deployment's demand played out on a ledger: its filters, and its own bind placing its replicas.

Held room (reserve.py), moves (displace.py) and the plan's blockers (fleet/gap.py) all ask what a
deployment other than the one being scheduled could do on some ledger. `Demand` answers with the
same filters, scores and bind the deployment's own reconcile runs; its engine options (device
matching) do not depend on the ledger, so they are worked out once and shared by every ledger.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from modelplane.devices import DeviceMatcher
from modelplane.errors import SpecError
from modelplane.model import Cluster, Deployment, Engine, PlacedEngine
from modelplane.scheduler.bind import BindOutcome, bind
from modelplane.scheduler.engines import EngineOptions
from modelplane.scheduler.filters import Context, FilterRunner
from modelplane.scheduler.ledger import Ledger
from modelplane.scheduler.packing import Packing


def devices_claimed(engines: Iterable[Engine | PlacedEngine]) -> int:
    """Devices one replica claims: pods x copies x requested devices, over every member."""
    return sum(
        member.pods_per_copy * engine.copies * sum(r.count for r in member.device_requests)
        for engine in engines
        for member in engine.members
    )


def valid(deployment: Deployment, clusters: Sequence[Cluster], matcher: DeviceMatcher) -> bool:
    """Whether the deployment's selectors can work (its own reconcile reports them when not: it places nothing)."""
    try:
        matcher.validate(deployment, clusters)
    except SpecError:
        return False
    return True


class Demand:
    """One deployment's filters and bind over any ledger."""

    def __init__(self, deployment: Deployment, matcher: DeviceMatcher) -> None:
        self.deployment = deployment
        self.engines = EngineOptions(deployment, matcher)

    def runner(self, ledger: Ledger) -> FilterRunner:
        return FilterRunner(self._context(ledger))

    def place(
        self, ledger: Ledger, clusters: Sequence[Cluster], spread: Mapping[str, int], *, count: int = 1
    ) -> BindOutcome:
        """Place up to `count` replicas on `ledger` (charged there), as the deployment's reconcile would."""
        ctx = self._context(ledger)
        return bind(ctx, FilterRunner(ctx), clusters=clusters, count=count, taken={}, replicas_on=spread)

    def usable(self, clusters: Iterable[Cluster], runner: FilterRunner) -> set[tuple[str, str]]:
        """(cluster, pool) its engines match, on the clusters that would take it but for capacity."""
        return {(c.name, p) for c in clusters if runner.eligible(c) for p in self.engines.matching_pools(c)}

    def _context(self, ledger: Ledger) -> Context:
        return Context(self.deployment, self.engines, ledger, packing=Packing(self.engines))
