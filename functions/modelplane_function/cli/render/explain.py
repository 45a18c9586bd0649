"""`--explain`: why the deployment's replicas landed where they did, from the last request sent.

The scheduler and the rollout step are pure functions, so running them again on the request the
function last received reproduces the function's decision and exposes what the status cannot hold:
retained, new, updated in place or leaving, each replica's revision, every engine's pool, per-cluster
reasons and the score breakdown. A rollout under way is previewed round by round from the same
request (`rollout_preview`, which `modelplane plan` prints too).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any, TextIO

from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane import fleet, names
from modelplane.errors import SpecError
from modelplane.fleet.preview import RolloutPreview, preview_text
from modelplane.model import Cluster, ModelReplica
from modelplane.rollout.preview import preview
from modelplane.rollout.reconcile import Reconciled
from modelplane.scheduler import ScheduleResult

from modelplane_function.cli.render.unmatched import unmatched
from modelplane_function.cli.render.verdict import failures
from modelplane_function.cli.render.wire import Doc
from modelplane_function.handlers import deployment, requirements
from modelplane_function.handlers.convert import to_dict
from modelplane_function.handlers.keep import observed_of_kind
from modelplane_function.handlers.pools import read_cluster
from modelplane_function.handlers.progress import observed_rollout


def _table(rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  " + "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]


def _state(rolled: Reconciled, name: str) -> str:
    if name in rolled.schedule.created:
        return "new"
    if name in rolled.surged:
        return "replacing"  # updated, its old objects serving until the new ones are Ready
    if name in rolled.updated:
        return "updated"
    if any(w.name == name for w in rolled.waiting):
        return "leaving"
    return "old" if name in rolled.as_observed and name not in rolled.schedule.held else "retained"


def lines(rolled: Reconciled) -> list[str]:
    result = rolled.schedule
    d = result.diagnosis
    out = [f"Placement: {d.placed} of {d.desired} replicas placed."]
    rows = [("REPLICA", "CLUSTER", "INDEX", "REVISION", "ENGINE", "POOL", "STATE")]
    for r in rolled.replicas:
        for e in r.engines:
            pool = e.members[0].pool if e.members else ""
            rows.append((r.name, r.cluster, str(r.index), r.revision or "-", e.name, pool, _state(rolled, r.name)))
    if len(rows) > 1:
        out += _table(rows)
    for removed in rolled.removed:
        out.append(f"Removed {removed.name} from {removed.cluster}: {removed.reason}.")
    for waiting in rolled.waiting:
        out.append(
            f"Leaving {waiting.name} on {waiting.cluster} ({waiting.reason}): kept until its successor is Ready "
            "or the disruption budget allows."
        )
    out.append(f"Rollout: {rolled.progress.reason}: {rolled.progress.message}")
    for move in result.moves:
        then = "it leaves now, without a successor" if move.evicted else "it leaves once its successor is Ready"
        out.append(f"Move: {move.text()}; {then}.")
    out.append(f"Diagnosis: {d.summary()}")
    if d.reserved:
        held = ", ".join(f"{r.deployment} ({r.replicas})" for r in d.reserved)
        out.append(
            "Room held first for the missing replicas of deployments ranked ahead "
            f"(fleet quota guarantee, priority, GPUs per replica): {held}. "
            "The scores below are over what they leave."
        )
    rejected = sorted(((c, s) for c, s in d.statuses.items() if not s.fits), key=lambda cs: cs[0])
    if rejected:
        rows = [(c if i == 0 else "", f.reason, f.detail) for c, s in rejected for i, f in enumerate(s.every)]
        out += _table([("CLUSTER", "REASON", "DETAIL"), *rows])
    if d.scores:
        keys = sorted({k for s in d.scores for k in s.scores})
        header = ("CLUSTER", "TOTAL", *(k.upper() for k in keys))
        out.append("Scores (last bind round, best first):")
        out += _table(
            [header, *((s.cluster, str(s.total), *(str(s.scores.get(k, "")) for k in keys)) for s in d.scores)]
        )
    return out


def scheduled(
    req: fnv1.RunFunctionRequest, now: datetime | None = None
) -> tuple[str, deployment.Inputs | None, Reconciled | str]:
    """The XR's title, its parsed inputs and the schedule (or, as a string, why there is none)."""
    xr = to_dict(req.observed.composite.resource)
    meta = xr.get("metadata") or {}
    title = f"{meta.get('namespace', '')}/{meta.get('name', '')}"
    own = observed_of_kind(req, names.KIND_REPLICA)
    if requirements.unresolved(req, requirements.declared(xr)):
        return title, None, "requirements were not resolved; nothing was scheduled."
    try:
        inputs = deployment.gather(req, xr, own)
    except SpecError as e:
        return title, None, f"not scheduled ({e.reason}): {e}"
    try:
        return title, inputs, deployment.reconcile_inputs(inputs, xr, now=now or datetime.now(UTC))
    except SpecError as e:
        return title, inputs, f"not scheduled ({e.reason}): {e}"


def fleet_view(req: fnv1.RunFunctionRequest, fleet_clusters: Sequence[Cluster] = ()) -> fleet.FleetView | str:
    """The fleet after this request's placement; a string when the fleet itself could not be read.

    `fleet_clusters` are every InferenceCluster render had: those the request lacks were left out
    by the clusterSelector's matchLabels, and are shown as such.
    """
    title, inputs, result = scheduled(req)
    if inputs is None:
        return f"{title}: {result}"
    seen = {c.name for c in inputs.clusters}
    excluded = [c for c in fleet_clusters if c.name not in seen]
    if isinstance(result, str):
        return fleet.build(inputs.deployment, inputs.clusters, inputs.replicas, None, problem=result, excluded=excluded)
    return fleet.build(
        inputs.deployment,
        inputs.clusters,
        inputs.replicas,
        _as_result(result),
        excluded=excluded,
        rollout=rollout_of(result, inputs.deployment.replicas),
        updated=result.updated,
        leaving=frozenset(w.name for w in result.waiting),
        replacing=result.surged,
    )


def rollout_preview(req: fnv1.RunFunctionRequest) -> RolloutPreview | None:
    """The rollout round by round from this request, when the deployment's replicas run an older revision."""
    now = datetime.now(UTC)
    _, inputs, rolled = scheduled(req, now)
    if inputs is None or isinstance(rolled, str):
        return None
    if all(r.revision in (rolled.revision, None) for r in inputs.replicas if r.name in inputs.composed):
        return None
    d = inputs.deployment
    previewed = preview(
        d,
        inputs.clusters,
        inputs.replicas,
        observed=observed_rollout(to_dict(req.observed.composite.resource)),
        now=now,
        unreadable=inputs.unreadable,
        composed=inputs.composed,
    )
    return RolloutPreview(
        subject=f"{d.namespace}/{d.name}",
        revision=rolled.revision,
        replicas=d.replicas,
        budget=rolled.budget,
        preview=previewed,
    )


def rollout_of(rolled: Reconciled, desired: int) -> fleet.Rollout:
    """The rollout as the deployment's status reports it after this reconcile."""
    return fleet.Rollout(
        revision=rolled.revision,
        desired=desired,
        updated=rolled.counts.updated,
        available=rolled.counts.available,
        total=rolled.counts.total,
        status=rolled.progress.status,
        reason=rolled.progress.reason,
        message=rolled.progress.message,
        renaming=sum(bool(r.replacing) for r in rolled.replicas),
    )


def _as_result(rolled: Reconciled) -> ScheduleResult:
    """What the fleet view draws: the desired replicas after this reconcile's share of the rollout."""
    return replace(rolled.schedule, replicas=rolled.replicas, removed=rolled.removed)


def blocked_by(req: fnv1.RunFunctionRequest, fleet_replicas: Sequence[ModelReplica]) -> tuple[fleet.Blocker, ...]:
    """Other deployments' replicas on the pools this request's deployment could use (fleet/gap.py)."""
    _, inputs, _ = scheduled(req)
    if inputs is None:
        return ()
    return fleet.blockers(inputs.deployment, inputs.clusters, fleet_replicas)


def clusters_of(docs: Iterable[Doc]) -> list[Cluster]:
    """The InferenceClusters among required resources, parsed as the function parses them; bad ones skipped."""
    out: list[Cluster] = []
    for doc in docs:
        if doc.head.get("kind") == names.KIND_CLUSTER and doc.head.get("apiVersion") == names.API_VERSION:
            try:
                out.append(read_cluster(doc.struct()))
            except SpecError:
                continue  # the function reports it; the view has nothing to draw
    return out


def rendering(replicas: Sequence[Mapping[str, Any]] | None) -> list[str]:
    """Whether each composed ModelReplica rendered; None: they were not rendered (--no-recurse)."""
    if replicas is None:
        return ["Rendering: not checked (--no-recurse)."]
    found = failures(replicas)
    out = [f"Rendering: {len(replicas) - len(found)} of {len(replicas)} ModelReplicas rendered."]
    if found:
        out += _table([("REPLICA", "REASON", "MESSAGE"), *((f.name, f.reason, f.message) for f in found)])
    return out


def explain(req: fnv1.RunFunctionRequest, out: TextIO, replicas: Sequence[Mapping[str, Any]] | None = None) -> None:
    """Print the placement, diagnosis, rendering and pool occupancy the function computed for this request.

    `replicas` are the composed ModelReplicas' own rendered documents (None: not rendered).
    """
    title, inputs, result = scheduled(req)
    if inputs is None or isinstance(result, str):
        found = unmatched(req)
        more = found.lines() if found is not None else []
        out.write(f"ModelDeployment {title}: {result}\n" + "".join(f"{line}\n" for line in more))
        return
    view = fleet.build(
        inputs.deployment,
        inputs.clusters,
        inputs.replicas,
        _as_result(result),
        updated=result.updated,
        leaving=frozenset(w.name for w in result.waiting),
        replacing=result.surged,
    )
    table = ["Fleet after this placement (nodes per pool):", *fleet.pool_table(view)]
    previewed = rollout_preview(req)
    body = [
        *lines(result),
        *(rendering(replicas) if result.replicas else []),
        *table,
        *(preview_text(previewed) if previewed is not None else []),
    ]
    out.write(f"ModelDeployment {title}\n" + "\n".join(body) + "\n")
