"""A spec change that leaves placed replicas nowhere to go is bad input, not a reason to remove them.

A running replica whose pinned pool no longer satisfies the new spec is normally re-placed. When
no pool of any cluster the deployment may use (namespace admitted, clusterSelector matched, taints
tolerated; readiness and free nodes aside, they change by themselves) could host the engine under
the new spec, re-placing would only remove it: a typo in a selector value would take the service
down. That spec is refused instead, naming the request and the selector that matches nothing, and
the function keeps every replica as it is.
"""

from __future__ import annotations

from collections.abc import Sequence

from modelplane.devices import DeviceMatcher
from modelplane.errors import InvalidNodeSelectorError
from modelplane.model import Cluster, Deployment, Engine, ModelReplica, NodePool
from modelplane.scheduler.engines import EngineOptions
from modelplane.scheduler.filters import SCHEDULING_EFFECTS
from modelplane.scheduler.selectors import admits_namespace, selector_matches, untolerated_taints


def _usable(deployment: Deployment, cluster: Cluster) -> bool:
    if admits_namespace(cluster, deployment.namespace, deployment.namespace_labels) is False:
        return False
    selector = deployment.cluster_selector
    if selector is not None and not selector_matches(selector, cluster.labels):
        return False
    return not untolerated_taints(cluster.taints, deployment.tolerations, SCHEDULING_EFFECTS)


def _mismatched(deployment: Deployment, cluster: Cluster, replica: ModelReplica, engines: EngineOptions) -> list[int]:
    """Indexes of the engines whose pinned pool on `cluster` no longer hosts them."""
    pinned = {e.name: {m.pool for m in e.members} for e in replica.engines}
    out: list[int] = []
    for i, engine in enumerate(deployment.engines):
        pools = pinned.get(engine.name, set())
        if len(pools) == 1 and engines.on_pool(cluster, i, next(iter(pools))) is None:
            out.append(i)
    return out


def _why(matcher: DeviceMatcher, engine: Engine, pools: Sequence[NodePool]) -> tuple[str, str, str]:
    """(member role, request name, what matches nothing) for an engine no pool can host.

    The words are the diagnosis's own (DeviceMatcher.unmatched), over every usable cluster's pools.
    """
    for member in engine.members:
        for request in member.device_requests:
            reason = matcher.unmatched(request, pools)
            if reason is not None:
                return (
                    member.role.value,
                    request.name,
                    reason.replace(" here", " on any cluster the deployment may use"),
                )
    member = next(m for m in engine.members if m.device_requests)
    where = "any cluster the deployment may use"
    return member.role.value, member.device_requests[0].name, f"no pool of {where} hosts every member together"


def check_placeable(
    deployment: Deployment,
    fleet: Sequence[Cluster],
    lost_pool: Sequence[tuple[ModelReplica, Cluster]],
    engines: EngineOptions,
    matcher: DeviceMatcher,
) -> None:
    """Raise InvalidNodeSelectorError when replicas that lost their pool (`lost_pool`) fit no pool anywhere."""
    if not lost_pool:
        return
    usable = [c for c in fleet if _usable(deployment, c)]
    for i, engine in enumerate(deployment.engines):
        stranded = sorted(r.name for r, c in lost_pool if i in _mismatched(deployment, c, r, engines))
        if not stranded or any(engines.of(c)[i] for c in usable):
            continue
        role, request, detail = _why(matcher, engine, [p for c in usable for p in c.pools])
        count = f"{len(stranded)} running replica{'s' if len(stranded) != 1 else ''}"
        raise InvalidNodeSelectorError(
            engine=engine.name,
            role=role,
            request=request,
            detail=f"{detail}; {count} would lose {'their' if len(stranded) != 1 else 'its'} pool "
            f"({', '.join(stranded)}), so every replica is kept as it is until the spec can be placed",
        )
