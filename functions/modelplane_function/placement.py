"""The ModelDeployment's `status.replicas` and `status.placement`, rendered from a ScheduleResult."""

from __future__ import annotations

from typing import Any

from modelplane.model import ModelReplica
from modelplane.scheduler.result import Diagnosis

MAX_UNPLACED_CLUSTERS = 20  # bounds the status size on a large fleet; the summary counts them all


def _pools(replica: ModelReplica) -> list[dict[str, str]]:
    return [{"engine": e.name, "role": m.role.value, "pool": m.pool} for e in replica.engines for m in e.members]


def replica_entry(replica: ModelReplica) -> dict[str, Any]:
    return {"name": replica.name, "cluster": replica.cluster, "index": replica.index, "pools": _pools(replica)}


def unplaced(diagnosis: Diagnosis) -> dict[str, Any]:
    rejected = sorted((name, s) for name, s in diagnosis.statuses.items() if not s.fits)
    clusters: list[dict[str, str]] = []
    for name, s in rejected[:MAX_UNPLACED_CLUSTERS]:
        entry = {"cluster": name, "reason": s.reason}
        if s.detail:
            entry["detail"] = s.detail
        clusters.append(entry)
    return {
        "count": diagnosis.unplaced,
        "summary": diagnosis.summary(),
        "clusters": clusters,
    }


def status(replicas: tuple[ModelReplica, ...], ready: int, diagnosis: Diagnosis) -> dict[str, Any]:
    """status.replicas, status.placement and, when replicas are missing, status.unplaced."""
    out: dict[str, Any] = {
        "replicas": {"total": len(replicas), "ready": ready},
        "placement": [replica_entry(r) for r in replicas],
    }
    if diagnosis.unplaced:
        out["unplaced"] = unplaced(diagnosis)
    return out
