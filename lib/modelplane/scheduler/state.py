"""The owner's side of stated demand: what a deployment's own reconcile tells the fleet (modelplane.stated).

Only the deployment's reconcile can run its own filters: it knows its namespace's labels, and its
selectors are its own to compile. So it states, per engine, the pools of the clusters that pass
every filter that does not depend on capacity or readiness (those change without its spec
changing, and every reader sees them for itself). A cluster not Ready is still listed: it takes
the demand again once Ready.

The statement names clusters once, as those it may use or those it may not, whichever list is
shorter, and pools by kind (modelplane.stated.pool_kind): at most MAX_CLUSTERS names and MAX_KINDS
kinds per engine, so its size does not grow with the fleet past that point (past it, the first
admitted clusters and kinds in order, and the statement says it was cut).
"""

from __future__ import annotations

from collections.abc import Sequence

from modelplane.devices import DeviceMatcher
from modelplane.errors import SpecError
from modelplane.model import Cluster, Deployment, SpreadPolicy
from modelplane.scheduler.capacity import capacity
from modelplane.scheduler.demand import devices_claimed
from modelplane.scheduler.engines import EngineOption, EngineOptions
from modelplane.scheduler.filters import FILTERS, Context, FilterRunner
from modelplane.scheduler.ledger import Ledger
from modelplane.stated import (
    MAX_CLUSTERS,
    MAX_KINDS,
    StatedDemand,
    StatedEngine,
    StatedOption,
    pool_kind,
    withdrawn,
)

# The filters a reader cannot run for the owner: every one that neither reads the ledger nor
# describes the moment (readiness, a replica that cannot be read). Device matching is stated as
# pool kinds instead, which readers match against each cluster's pools themselves: a cluster
# without a pool of a stated kind takes nothing, so it need not be named.
STATED_FILTERS = tuple(
    f for f in FILTERS if not f.uses_ledger and f.name not in {"Ready", "ReplicasReadable", "DeviceMatch"}
)


def state_demand(deployment: Deployment, clusters: Sequence[Cluster], engines: EngineOptions) -> StatedDemand:
    """What `deployment` states: the clusters its filters admit, and per engine the pool kinds it can use."""
    runner = FilterRunner(Context(deployment, engines, Ledger(())), STATED_FILTERS)
    kinds: list[dict[str, EngineOption]] = [{} for _ in deployment.engines]
    admitted: list[str] = []
    names: set[str] = set()
    for cluster in sorted(clusters, key=lambda c: c.name):
        if cluster.name in names:
            continue  # a name listed twice is one cluster to the readers
        names.add(cluster.name)
        if not runner.eligible(cluster):
            continue
        admitted.append(cluster.name)
        by_name = {p.name: p for p in cluster.pools}
        for index, matched in enumerate(engines.of(cluster)):
            for option in matched:
                # An option no pool of its kind could hold even empty states nothing anyone can hold room for;
                # one spanning a fabric's pools is not stated (pool kinds name one pool), so others hold less.
                if not option.split and capacity(by_name[option.pool]).fits(option.charge):
                    kinds[index].setdefault(pool_kind(by_name[option.pool]), option)
    refused = sorted(names.difference(admitted))
    all_but = len(refused) < len(admitted)
    listed = refused if all_but else admitted
    truncated = len(listed) > MAX_CLUSTERS
    if truncated and all_but:  # too many to name either way: name the first admitted ones
        all_but, listed = False, admitted
    return StatedDemand(
        namespace=deployment.namespace,
        name=deployment.name,
        replicas=deployment.replicas,
        devices=devices_claimed(deployment.engines),
        movable=deployment.movable,
        strict_spread=deployment.spread is SpreadPolicy.STRICT,
        clusters=tuple(listed[:MAX_CLUSTERS]),
        all_but=all_but,
        engines=tuple(
            StatedEngine(
                name=engine.name, options=tuple(_stated(kind, by_kind[kind]) for kind in sorted(by_kind)[:MAX_KINDS])
            )
            for engine, by_kind in zip(deployment.engines, kinds, strict=True)
        ),
        truncated=truncated or any(len(by_kind) > MAX_KINDS for by_kind in kinds),
        priority_class=deployment.priority_class_name or "",
    )


def _stated(kind: str, option: EngineOption) -> StatedOption:
    return StatedOption(
        kind=kind,
        cost=option.cost,
        charge=option.charge,
        claimed=option.claimed,
        idle=option.idle,
        spare=option.spare,
        size=option.size,
    )


def statements(
    deployments: Sequence[Deployment], clusters: Sequence[Cluster], *, matcher: DeviceMatcher | None = None
) -> tuple[StatedDemand, ...]:
    """What each deployment's own reconcile states: its demand, or none when its spec is refused."""
    matcher = matcher if matcher is not None else DeviceMatcher()
    fleet = sorted(clusters, key=lambda c: c.name)
    out: list[StatedDemand] = []
    for d in deployments:
        try:
            matcher.validate(d, fleet)
        except SpecError:
            out.append(withdrawn(d.namespace, d.name))
            continue
        out.append(state_demand(d, fleet, EngineOptions(d, matcher)))
    return tuple(out)
