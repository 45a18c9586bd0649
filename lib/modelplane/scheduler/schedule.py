"""The only orchestrator: retain -> scale down -> ledger -> filter -> score -> bind.

`schedule()` is a pure function of (deployment, clusters, every observed replica of the fleet).
Inputs are sorted on entry and every tie ends in a name, so shuffled inputs give identical
results. Expected rejections are Statuses in the Diagnosis; only a device selector that does not
compile, or fails to evaluate on every device it reaches, raises (InvalidNodeSelectorError, from
the device matcher's validate): then nothing is decided, and every running replica stays.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from types import MappingProxyType

from modelplane import names
from modelplane.devices import DeviceMatcher
from modelplane.model import Cluster, Deployment, ModelReplica
from modelplane.scheduler.bind import bind
from modelplane.scheduler.engines import EngineOptions
from modelplane.scheduler.filters import Context, FilterRunner
from modelplane.scheduler.ledger import Ledger
from modelplane.scheduler.replicas import build_replica
from modelplane.scheduler.result import Diagnosis, RemovedReplica, ScheduleResult
from modelplane.scheduler.retain import REASON_DUPLICATE, REASON_SCALED_DOWN, Kept, charge_kept, pinned_options
from modelplane.scheduler.scale_down import scale_down


def schedule(
    deployment: Deployment,
    clusters: Sequence[Cluster],
    replicas: Sequence[ModelReplica],
    *,
    matcher: DeviceMatcher | None = None,
) -> ScheduleResult:
    """Place `deployment`'s replicas on `clusters`, given every observed replica of the fleet.

    `matcher` lets a long-running caller share selector results across calls; by default each call
    matches from scratch.
    """
    matcher = matcher if matcher is not None else DeviceMatcher()
    fleet = sorted(clusters, key=lambda c: c.name)
    matcher.validate(deployment, fleet)
    by_name = {c.name: c for c in fleet}
    observed = sorted(replicas, key=lambda r: (r.namespace, r.deployment, r.cluster, r.index, r.name))
    ours = [r for r in observed if r.namespace == deployment.namespace and r.deployment == deployment.name]
    ledger = Ledger(fleet)
    for r in observed:
        if not (r.namespace == deployment.namespace and r.deployment == deployment.name):
            ledger.charge(r.cluster, r.node_cost_by_pool())
    engines = EngineOptions(deployment, matcher)

    # Retain: spec checks per observed replica (one replica per identity).
    removed: list[RemovedReplica] = []
    kept: list[Kept] = []
    seen: set[tuple[str, int]] = set()
    for r in ours:
        if (r.cluster, r.index) in seen:
            removed.append(_removed(r, REASON_DUPLICATE))
            continue
        seen.add((r.cluster, r.index))
        cluster = by_name.get(r.cluster)
        verdict = pinned_options(deployment, cluster, r, engines)
        if isinstance(verdict, str):
            removed.append(_removed(r, verdict))
        elif cluster is not None:
            kept.append(Kept(observed=r, cluster=cluster, options=verdict))

    # Scale down, then charge what stays (growth is judged against the ledger here).
    kept, dropped = scale_down(kept, deployment.replicas)
    removed.extend(_removed(k.observed, REASON_SCALED_DOWN) for k in dropped)
    kept, outgrown = charge_kept(ledger, kept)
    removed.extend(_removed(k.observed, reason) for k, reason in outgrown)
    retained = [
        build_replica(
            deployment=deployment,
            cluster=k.cluster,
            name=k.observed.name,
            index=k.observed.index,
            options=k.options,
            ready=k.observed.ready,
        )
        for k in kept
    ]

    # Filter, score, bind the shortfall. Indexes of replicas removed here stay unused this call, so
    # a re-placed replica gets a new name and `created` never overlaps `removed`.
    taken: dict[str, set[int]] = {}
    for r in ours:
        taken.setdefault(r.cluster, set()).add(r.index)
    ctx = Context(deployment, engines, ledger)
    outcome = bind(
        ctx,
        FilterRunner(ctx),
        clusters=fleet,
        count=max(deployment.replicas - len(retained), 0),
        taken={name: frozenset(indexes) for name, indexes in taken.items()},
        replicas_on=Counter(r.cluster for r in retained),
    )
    created = [
        build_replica(
            deployment=deployment,
            cluster=p.cluster,
            name=names.replica_name(deployment.name, p.cluster.name, p.index),
            index=p.index,
            options=p.options,
            ready=False,
        )
        for p in outcome.placements
    ]
    desired = sorted([*retained, *created], key=lambda r: (r.cluster, r.index))
    return ScheduleResult(
        replicas=tuple(desired),
        created=frozenset(r.name for r in created),
        removed=tuple(sorted(removed, key=lambda r: (r.cluster, r.index, r.name))),
        diagnosis=Diagnosis(
            desired=deployment.replicas,
            placed=len(desired),
            total_clusters=len(fleet),
            statuses=MappingProxyType(dict(sorted(outcome.statuses.items()))),
            scores=outcome.scores,
            evaluated=outcome.evaluated,
        ),
    )


def _removed(replica: ModelReplica, reason: str) -> RemovedReplica:
    return RemovedReplica(name=replica.name, cluster=replica.cluster, index=replica.index, reason=reason)
