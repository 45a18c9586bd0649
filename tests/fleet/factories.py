"""Keyword-only builders for fleet view tests: ScheduleResults by hand, chips and pools by value."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType

from modelplane.fleet import Chip, Origin, PoolView
from modelplane.model import ModelReplica
from modelplane.scheduler import ClusterScore, Code, Diagnosis, RemovedReplica, ScheduleResult, Status


def result(
    *,
    desired: int,
    replicas: Sequence[ModelReplica] = (),
    created: Sequence[ModelReplica] = (),
    removed: Sequence[RemovedReplica] = (),
    total_clusters: int = 1,
    statuses: Mapping[str, Status] | None = None,
    scores: Sequence[ClusterScore] = (),
) -> ScheduleResult:
    """A ScheduleResult whose desired set is `replicas` + `created` (the latter placed by this call)."""
    desired_set = sorted([*replicas, *created], key=lambda r: (r.cluster, r.index))
    return ScheduleResult(
        replicas=tuple(desired_set),
        created=frozenset(r.name for r in created),
        removed=tuple(removed),
        diagnosis=Diagnosis(
            desired=desired,
            placed=len(desired_set),
            total_clusters=total_clusters,
            statuses=MappingProxyType(dict(statuses or {})),
            scores=tuple(scores),
        ),
    )


def rejected(reason: str, detail: str = "", *, code: Code = Code.UNSCHEDULABLE) -> Status:
    return Status(code=code, reason=reason, detail=detail)


def score(cluster: str, total: int, **scores: int) -> ClusterScore:
    return ClusterScore(cluster=cluster, total=total, scores=MappingProxyType(scores))


def chip(
    replica: ModelReplica,
    *,
    nodes: int = 1,
    origin: Origin = Origin.OTHER,
    engines: Sequence[str] = ("main",),
    devices: int | None = None,
) -> Chip:
    """A replica's chip; its pods claim 8 devices per node unless `devices` says otherwise."""
    return Chip(
        namespace=replica.namespace,
        deployment=replica.deployment,
        cluster=replica.cluster,
        index=replica.index,
        name=replica.name,
        nodes=nodes,
        engines=tuple(engines),
        origin=origin,
        devices=8 * nodes if devices is None else devices,
    )


def pool_view(
    name: str, *, nodes: int = 4, chips: Sequence[Chip] = (), devices: str = "8x gpu", per_node: int = 8
) -> PoolView:
    used = sum(c.nodes for c in chips)
    return PoolView(name=name, nodes=nodes, used=used, chips=tuple(chips), devices=devices, per_node=per_node)
