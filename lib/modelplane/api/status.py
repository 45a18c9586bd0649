"""The ModelDeployment status the function publishes: replica counts, placement, and why the rest is unplaced.

Shape (apis/modeldeployment/definition.yaml): `replicas {total, ready, updated, available}`,
`revision`, `placement[]` of `{name, cluster, index, revision, pools[] {engine, role, pool}}`
sorted by (cluster, index), and `unplaced
{count, summary, clusters[] {cluster, reason, detail, also[] {reason, detail}}}` only while
replicas are unplaced: `reason` is the cluster's first failing filter (the one the summary
counts), `also` the filters after it that failed too. Bounded so a large fleet cannot bloat the
object: MAX_UNPLACED_CLUSTERS entries (sorted by cluster), at most one `also` per filter, details
cut at MAX_DETAIL characters. `quota {name, gpus[] {name, guaranteed, used, borrowed, limit}}`:
the namespace's FleetQuota with this reconcile's decisions, when one selects it.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from modelplane import model as m
from modelplane.quota import QuotaStanding
from modelplane.scheduler.result import Diagnosis, Status

MAX_UNPLACED_CLUSTERS = 20  # the summary still counts every cluster
MAX_DETAIL = 512


def _detail(text: str) -> str:
    return text if len(text) <= MAX_DETAIL else text[: MAX_DETAIL - 3] + "..."


def _rejection(cluster: str, status: Status) -> dict[str, Any]:
    entry: dict[str, Any] = {"cluster": cluster, "reason": status.reason, "detail": _detail(status.detail)}
    if status.also:
        entry["also"] = [{"reason": s.reason, "detail": _detail(s.detail)} for s in status.also]
    return entry


def deployment_status(
    replicas: Sequence[m.ModelReplica],
    diagnosis: Diagnosis | None,
    *,
    revision: str | None = None,
    unavailable: Collection[str] = (),
    quota: Sequence[QuotaStanding] = (),
) -> dict[str, Any]:
    """`status` of a ModelDeployment for the given desired replicas (their `ready` as observed).

    With the deployment's `revision`: how many replicas render it (`updated`), how many are Ready and
    not among the `unavailable` this reconcile takes down (`available`), and each replica's revision.
    With `quota`, its namespace's FleetQuota as it stands after this reconcile's decisions.
    """
    ordered = sorted(replicas, key=lambda r: (r.cluster, r.index))
    counts: dict[str, int] = {"total": len(ordered), "ready": sum(r.ready for r in ordered)}
    if revision is not None:
        counts["updated"] = sum(r.revision == revision for r in ordered)
        counts["available"] = sum(r.ready and r.name not in unavailable for r in ordered)
    status: dict[str, Any] = {
        "replicas": counts,
        "placement": [
            {
                "name": r.name,
                "cluster": r.cluster,
                "index": r.index,
                **({"revision": r.revision} if r.revision else {}),
                "pools": [
                    {"engine": e.name, "role": x.role.value, "pool": x.pool} for e in r.engines for x in e.members
                ],
            }
            for r in ordered
        ],
    }
    if revision is not None:
        status["revision"] = revision
    if diagnosis is not None and diagnosis.unplaced:
        rejected = sorted(((c, s) for c, s in diagnosis.statuses.items() if not s.fits), key=lambda cs: cs[0])
        status["unplaced"] = {
            "count": diagnosis.unplaced,
            "summary": diagnosis.summary(),
            "clusters": [_rejection(c, s) for c, s in rejected[:MAX_UNPLACED_CLUSTERS]],
        }
    if quota:
        status["quota"] = {
            "name": quota[0].quota,
            "gpus": [
                {
                    "name": q.resource,
                    "guaranteed": q.guaranteed,
                    "used": q.used,
                    "borrowed": q.borrowed,
                    **({"limit": q.limit} if q.limit is not None else {}),
                }
                for q in quota
            ],
        }
    return status
