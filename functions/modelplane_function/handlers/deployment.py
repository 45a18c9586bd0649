"""ModelDeployment: read the fleet, schedule, compose one ModelReplica per placed replica.

Safety rule: nothing the XR already composes is dropped unless the scheduler decided so from
complete, valid input. An unresolved requirement, an invalid spec or selector, an empty cluster
list, one of its own ModelReplicas that cannot be read or a response too large to send all end in
retain-only: every observed ModelReplica is re-emitted and the problem is reported in the
ReplicasScheduled condition. Another deployment's object that cannot be read is contained
instead: its cluster is left alone (see modelplane.scheduler.unreadable), everything else goes on.

The ModelReplicas this XR composes are its own whatever their labels say (a relabelled one is
kept and its labels restored); the composite is Ready exactly when spec.replicas replicas are.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from crossplane.function import response
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane import api, names
from modelplane.api.demand import can_state
from modelplane.devices import DeviceMatcher, SelectorResults
from modelplane.errors import SpecError
from modelplane.model import Cluster, Deployment, ModelReplica
from modelplane.rollout.reconcile import Reconciled, reconcile
from modelplane.scheduler import ScheduleResult, schedule
from modelplane.scheduler.filters import REASON_KAI_NOT_ALLOWED
from modelplane.scheduler.policy import FleetPolicy
from modelplane.scheduler.result import Move
from modelplane.scheduler.selectors import selector_matches
from modelplane.scheduler.unreadable import Unreadable
from modelplane.stated import StatedDemand, withdrawn

from modelplane_function.handlers import bounds, failures, limits, notes, requirements
from modelplane_function.handlers.conditions import Condition, event, report, serves_its_revision
from modelplane_function.handlers.convert import project, to_dict, to_struct
from modelplane_function.handlers.keep import keep, minimal, observed_of_kind
from modelplane_function.handlers.progress import observed_rollout
from modelplane_function.handlers.stamps import stamped

# Selector results outlive a call: every deployment's call sees the same fleet, so after the first
# one no CEL is evaluated until a device kind or a selector changes.
SELECTOR_RESULTS = SelectorResults()


@dataclass(frozen=True, slots=True, kw_only=True)
class Inputs:
    """Everything schedule() needs, parsed from one request."""

    deployment: Deployment
    clusters: tuple[Cluster, ...]
    replicas: tuple[ModelReplica, ...]
    unreadable: Unreadable = field(default_factory=Unreadable)
    composed: frozenset[str] = frozenset()  # names of the ModelReplicas the XR composes
    demands: tuple[StatedDemand, ...] | None = None  # other deployments' statements; None = not read
    policy: FleetPolicy | None = None  # the platform's quotas and priorities


def schedule_inputs(inputs: Inputs, *, matcher: DeviceMatcher | None = None) -> ScheduleResult:
    """schedule() on what gather() read, as the function runs it."""
    return schedule(
        inputs.deployment,
        inputs.clusters,
        inputs.replicas,
        matcher=matcher,
        unreadable=inputs.unreadable,
        composed=inputs.composed,
        demands=inputs.demands,
        policy=inputs.policy,
    )


def reconcile_inputs(
    inputs: Inputs, xr: Mapping[str, Any], *, now: datetime, matcher: DeviceMatcher | None = None
) -> Reconciled:
    """The scheduler's decision paced by the rollout budget, on what gather() read."""
    return reconcile(
        inputs.deployment,
        inputs.clusters,
        inputs.replicas,
        observed=observed_rollout(xr),
        now=now,
        matcher=matcher,
        unreadable=inputs.unreadable,
        composed=inputs.composed,
        demands=inputs.demands,
        policy=inputs.policy,
    )


class NoClustersError(SpecError):
    reason = names.REASON_NO_CLUSTERS


def replica_key(replica: ModelReplica) -> str:
    """The composition resource name of a replica: its identity (cluster, index), stable across calls."""
    return f"replica-{replica.cluster}-{replica.index}"


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    """metadata when it is an object; the parsers report a malformed one, this must not crash first."""
    meta = obj.get("metadata")
    return meta if isinstance(meta, Mapping) else {}  # pyright: ignore[reportUnknownVariableType]


def _parse_all(kind: str, objs: list[dict[str, Any]], parse: Any) -> list[Any]:
    out: list[Any] = []
    for obj in objs:
        try:
            out.append(parse(obj))
        except SpecError as e:
            meta = _meta(obj)
            where = "/".join(p for p in (meta.get("namespace"), meta.get("name")) if p)
            err = SpecError(f"{kind} {where}: {e}")
            raise err from e
    return out


def _as_own(obj: Mapping[str, Any], deployment: str) -> dict[str, Any]:
    """A composed ModelReplica with this deployment's label, whatever its labels say now."""
    meta = dict(_meta(obj))
    labels = meta.get("labels")
    labels = dict(labels) if isinstance(labels, Mapping) else {}  # pyright: ignore[reportUnknownArgumentType]
    meta["labels"] = {**labels, names.LABEL_DEPLOYMENT: deployment}
    return {**obj, "metadata": meta} if isinstance(obj.get("metadata"), Mapping) else dict(obj)


def relabelled(own: Mapping[str, Mapping[str, Any]], deployment: str) -> list[str]:
    """Names of composed ModelReplicas whose deployment label names another deployment.

    A replica without the label (as Modelplane composes them) gets it quietly: nobody changed it.
    """
    out: list[str] = []
    for obj in own.values():
        labels = _meta(obj).get("labels")
        label = labels.get(names.LABEL_DEPLOYMENT) if isinstance(labels, Mapping) else None  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
        if label and label != deployment:
            out.append(str(_meta(obj).get("name")))
    return sorted(out)


def gather(req: fnv1.RunFunctionRequest, xr: Mapping[str, Any], own: Mapping[str, Mapping[str, Any]]) -> Inputs:
    """Parse the deployment and the fleet from a request whose requirements are resolved.

    `own` holds the ModelReplicas this XR composes (observed): they are its own even when the
    required list (a cache, in a real control plane) lags behind or their labels were changed.
    """
    deployment = api.parse_deployment(xr)
    problem = names.label_value_problem(deployment.name)
    if problem is not None:
        msg = f"metadata.name: {problem}"
        raise SpecError(msg)
    deployment = replace(deployment, namespace_labels=requirements.namespace_labels(req, deployment.namespace))
    deployment = requirements.model_cache(req, deployment)
    if not requirements.structs(req, requirements.CLUSTERS) and deployment.replicas > 0:
        if deployment.cluster_selector is None:
            msg = "no InferenceCluster exists to place replicas on"
        else:
            msg = "no InferenceCluster matches the deployment's clusterSelector"
        raise NoClustersError(msg)
    clusters, invalid = requirements.clusters(req)
    selector = deployment.cluster_selector
    unmatched = selector is not None and not any(selector_matches(selector, c.labels) for c in clusters)
    if unmatched and deployment.replicas > 0 and not invalid:
        msg = "no InferenceCluster matches the deployment's clusterSelector"
        raise NoClustersError(msg)
    own_by_id: dict[tuple[str, str], dict[str, Any]] = {}
    for obj in own.values():
        meta = _meta(obj)
        own_by_id[(str(meta.get("namespace", "")), str(meta.get("name", "")))] = _as_own(obj, deployment.name)
    parsed = _parse_all(names.KIND_REPLICA, list(own_by_id.values()), api.parse_replica)
    owned = [stamped(r, _meta(obj)) for r, obj in zip(parsed, own_by_id.values(), strict=True)]
    fleet, unreadable_on = requirements.replicas(req, skip=frozenset(own_by_id))
    by_id = {**fleet, **dict(zip(own_by_id, owned, strict=True))}
    return Inputs(
        deployment=deployment,
        clusters=tuple(clusters),
        replicas=tuple(by_id[k] for k in sorted(by_id)),
        unreadable=Unreadable(clusters=invalid, replicas_on=unreadable_on),
        composed=frozenset(r.name for r in owned),
        demands=requirements.demands(req, deployment),
        policy=requirements.policy(req, deployment, DeviceMatcher(results=SELECTOR_RESULTS)),
    )


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _ready_condition(ready: int, desired: int, why: list[str] | None = None) -> Condition:
    """`why`: what replicas that do not serve say failed (their name first), so the deployment tells."""
    message = f"{ready} of {desired} replicas are ready" + (f"; {failures.listed(why)}." if why else ".")
    typ = names.CONDITION_REPLICAS_READY
    if ready >= desired:
        return Condition(type=typ, status="True", reason=names.REASON_ALL_READY, message=message)
    return Condition(type=typ, status="False", reason=names.REASON_NOT_ALL_READY, message=message)


def _why(replicas: Mapping[str, Mapping[str, Any] | None]) -> list[str]:
    """What each composed ModelReplica (by name) that is not ready says failed, in name order."""
    out: list[str] = []
    for name, obj in sorted(replicas.items()):
        failure = None if serves_its_revision(obj) else failures.replica_failure(obj)
        if failure is not None:
            out.append(f"{name}: {failure}")
    return out


def _desired_count(xr: Mapping[str, Any], fallback: int) -> int:
    spec = xr.get("spec")
    n = spec.get("replicas") if isinstance(spec, Mapping) else None  # pyright: ignore[reportUnknownMemberType]
    return n if isinstance(n, int) and not isinstance(n, bool) and n >= 0 else fallback


def _retain_only(
    rsp: fnv1.RunFunctionResponse,
    xr: Mapping[str, Any],
    own: Mapping[str, Mapping[str, Any]],
    problem: Condition | None,
) -> None:
    """Keep every observed replica; report `problem` (None: waiting for requirements, say nothing).

    The deployment states no demand meanwhile: room held for it would stay empty, and its replicas
    cannot move while nothing here can place their successors.
    """
    keep(rsp, own)
    meta = _meta(xr)
    state(rsp, withdrawn(str(meta.get("namespace") or ""), str(meta.get("name") or "")))
    ready = sum(1 for obj in own.values() if serves_its_revision(obj))
    status: dict[str, Any] = {"replicas": {"total": len(own), "ready": ready}}
    observed_status = xr.get("status")
    observed_status = observed_status if isinstance(observed_status, Mapping) else {}
    # What placement and diagnosis the XR shows stays until the function can decide again.
    status.update({k: observed_status[k] for k in ("placement", "unplaced") if k in observed_status})
    rsp.desired.composite.resource.MergeFrom(to_struct({"status": status}))
    desired = _desired_count(xr, len(own))
    set_ready(rsp, ready=ready, desired=desired)
    if problem is None:
        return
    report(rsp, xr, problem, warn=True)
    named = {str(_meta(obj).get("name", key)): obj for key, obj in own.items()}
    report(rsp, xr, _ready_condition(ready, desired, _why(named)))


DEMAND_KEY = "demand"


def state(rsp: fnv1.RunFunctionResponse, statement: StatedDemand) -> None:
    """Compose the ModelDemand through which the other deployments learn this one's demand."""
    if not statement.namespace or not can_state(statement.name):
        return  # no name a ModelDemand could carry: the deployment is refused for it, and states nothing
    desired = rsp.desired.resources[DEMAND_KEY]
    desired.resource.CopyFrom(to_struct(api.demand_manifest(statement)))
    desired.ready = fnv1.READY_TRUE  # nothing waits on it: it is read, not served


def set_ready(rsp: fnv1.RunFunctionResponse, *, ready: int, desired: int) -> None:
    """The composite's readiness, stated rather than derived: Crossplane would call an XR composing
    nothing ready, so 0 of N placed would read as Ready. Ready when `desired` replicas are ready."""
    rsp.desired.composite.ready = fnv1.READY_TRUE if ready >= desired else fnv1.READY_FALSE


def _held_note(result: ScheduleResult) -> str:
    """What the condition adds about replicas kept as they are on clusters that cannot be read."""
    clusters = sorted({r.cluster for r in result.replicas if r.name in result.held})
    if not clusters:
        return ""
    n = _count(len(result.held), "replica")
    statuses = result.diagnosis.statuses
    why = "; ".join(statuses[c].detail for c in clusters if c in statuses)
    return f" {n} kept as observed on {', '.join(clusters)}, whose InferenceCluster cannot be read ({why})."


_KAI_NOTES = 3  # clusters named in full; a fleet's worth would flood the condition


def _kai_note(result: ScheduleResult) -> str:
    """What the namespace may use where a cluster refused its queue or priority class: the fix is there."""
    if not result.diagnosis.unplaced:
        return ""
    statuses = result.diagnosis.statuses
    refused = [statuses[c].detail for c in sorted(statuses) if statuses[c].reason == REASON_KAI_NOT_ALLOWED]
    more = f" ({len(refused) - _KAI_NOTES} more clusters alike)" if len(refused) > _KAI_NOTES else ""
    return "".join(f" {detail}." for detail in refused[:_KAI_NOTES]) + more


_RESERVED_NOTES = 5  # deployments of the namespace named; the count says how many more


def _ours(subject: str, namespace: str) -> bool:
    """Whether a "namespace/name" subject is in `namespace`: only those a tenant's messages name."""
    return subject.startswith(f"{namespace}/")


def _reserved_note(result: ScheduleResult, namespace: str) -> str:
    """Why free-looking capacity was not used: it is held for larger deployments' missing replicas.

    Deployments of other namespaces are counted, never named: a tenant learns that larger demand
    exists elsewhere, not whose it is.
    """
    reserved = result.diagnosis.reserved
    if not result.diagnosis.unplaced or not reserved:
        return ""
    own = [r for r in reserved if _ours(r.deployment, namespace)]
    parts = [f"{r.deployment.split('/', 1)[1]} ({r.replicas})" for r in own[:_RESERVED_NOTES]]
    if len(own) > _RESERVED_NOTES:
        parts.append(f"{len(own) - _RESERVED_NOTES} more of this namespace")
    elsewhere = [r for r in reserved if not _ours(r.deployment, namespace)]
    if elsewhere:
        replicas = sum(r.replicas for r in elsewhere)
        parts.append(f"{_count(replicas, 'replica')} of {_count(len(elsewhere), 'deployment')} in other namespaces")
    return (
        " Room is held first for the missing replicas of deployments ranked ahead "
        f"(fleet quota guarantee, priority, GPUs per replica): {', '.join(parts)}."
    )


def _scheduled_condition(result: ScheduleResult, deployment: Deployment) -> Condition:
    diagnosis = result.diagnosis
    namespace = deployment.namespace
    status = "False" if diagnosis.unplaced else "True"
    message = diagnosis.message() + _reserved_note(result, namespace) + _kai_note(result) + _held_note(result)
    reason = diagnosis.reason()
    evicted = [
        m
        for m in result.moves
        if m.evicted and (m.replica.namespace, m.replica.deployment) == (namespace, deployment.name)
    ]
    if evicted:  # the fleet's policy, not capacity, is why this call leaves replicas unplaced
        status, reason = "False", evicted[0].evicted
        message += " " + "; ".join(_eviction_text(m) for m in evicted) + "."
    return Condition(type=names.CONDITION_REPLICAS_SCHEDULED, status=status, reason=reason, message=message)


def _eviction_text(m: Move) -> str:
    nodes = _count(sum(m.replica.node_cost_by_pool().values()), "node")
    why = (
        "for a team within its fleet quota guarantee"
        if m.evicted == names.REASON_RECLAIMED
        else "for demand of higher priority"
    )
    where = f"{m.cluster}/{','.join(m.pools)}"
    return f"{m.evicted} {m.replica.name} ({nodes} of {where}) {why}: it leaves now, without a successor"


class ResponseTooLargeError(Exception):
    """The composed replicas alone outgrew the response limit; `size` extrapolates them to all replicas."""

    def __init__(self, size: int) -> None:
        super().__init__(size)
        self.size = size


def _compose(
    rsp: fnv1.RunFunctionResponse,
    xr: Mapping[str, Any],
    own: Mapping[str, Mapping[str, Any]],
    inputs: Inputs,
    rolled: Reconciled,
) -> None:
    """The desired state; ResponseTooLargeError as soon as the replicas composed so far cannot fit.

    The size is counted replica by replica: each ModelReplica carries the whole pod template, so
    1,024 replicas of a 1 MiB template built a 1 GiB answer (3.2 GiB of worker memory) only to
    refuse it. Stopping at the limit keeps what one call builds to about the limit itself.
    """
    result = rolled.schedule
    key_of_name = {str((obj.get("metadata") or {}).get("name")): key for key, obj in own.items()}
    composed: list[ModelReplica] = []
    size = 0
    for i, r in enumerate(rolled.replicas):
        key = key_of_name.get(r.name, replica_key(r))
        desired = rsp.desired.resources[key]
        # Held (cluster unreadable) or left alone by the rollout: re-emitted exactly as observed.
        if r.name in rolled.as_observed and key in own:
            manifest = minimal(_as_own(own[key], inputs.deployment.name))
        else:
            manifest = api.replica_manifest(r)
        desired.resource.CopyFrom(to_struct(manifest))
        size += desired.resource.ByteSize()
        if size > limits.MAX_RESPONSE_BYTES:
            # Replicas of one deployment carry the same template: the ones composed stand for the rest.
            raise ResponseTooLargeError(size * len(rolled.replicas) // (i + 1))
        # Readiness is what this XR observes of its composed replica, not what the fleet list says.
        ready_now = serves_its_revision(own.get(key))
        if ready_now:
            desired.ready = fnv1.READY_TRUE
        composed.append(replace(r, ready=ready_now))
    state(rsp, result.statement or withdrawn(inputs.deployment.namespace, inputs.deployment.name))
    ready = sum(r.ready for r in composed)
    status = api.deployment_status(
        composed,
        result.diagnosis,
        revision=rolled.revision,
        unavailable=rolled.updated - rolled.surged,
        quota=result.quota,
    )
    rsp.desired.composite.resource.MergeFrom(to_struct({"status": status}))
    set_ready(rsp, ready=ready, desired=inputs.deployment.replicas)
    report(rsp, xr, _scheduled_condition(result, inputs.deployment), warn=True)
    why = _why({r.name: own.get(key_of_name.get(r.name, replica_key(r))) for r in rolled.replicas})
    report(rsp, xr, _ready_condition(ready, inputs.deployment.replicas, why))
    p = rolled.progress
    progressing = Condition(type=names.CONDITION_PROGRESSING, status=p.status, reason=p.reason, message=p.message)
    report(rsp, xr, progressing, warn=True)
    restored = [n for n in relabelled(own, inputs.deployment.name) if n in {r.name for r in rolled.replicas}]
    if restored:
        label = f"{names.LABEL_DEPLOYMENT}={inputs.deployment.name}"
        message = f"Restored {label} on {_count(len(restored), 'composed replica')}: {', '.join(restored)}."
        event(rsp, warning=True, reason=names.REASON_REPLICAS_RELABELLED, message=message)
    placed = [r for r in rolled.replicas if r.name in result.created]
    if placed:
        where = ", ".join(f"{r.name} on {r.cluster}" for r in placed)
        message = f"Placed {_count(len(placed), 'new replica')}: {where}."
        event(rsp, warning=False, reason=names.REASON_REPLICAS_PLACED, message=message)
    if rolled.updated:
        which = ", ".join(sorted(rolled.updated))
        message = f"Updated {_count(len(rolled.updated), 'replica')} to revision {rolled.revision}: {which}."
        event(rsp, warning=False, reason=names.REASON_REPLICAS_UPDATED, message=message)
    _move_events(rsp, inputs.deployment, result)
    if rolled.removed:
        what = ", ".join(f"{r.name} from {r.cluster} ({r.reason})" for r in rolled.removed)
        message = f"Removed {_count(len(rolled.removed), 'replica')}: {what}."
        event(rsp, warning=False, reason=names.REASON_REPLICAS_REMOVED, message=message)


def _move_events(rsp: fnv1.RunFunctionResponse, deployment: Deployment, result: ScheduleResult) -> None:
    """The fleet's moves this deployment makes, and those made for it (scheduler/displace.py).

    Another namespace's deployment or replica is never named, only said to be elsewhere.
    """
    ns = deployment.namespace
    me = f"{ns}/{deployment.name}"
    mine = [m for m in result.moves if (m.replica.namespace, m.replica.deployment) == (ns, deployment.name)]
    making = [m for m in mine if not m.evicted]
    if making:
        what = "; ".join(
            f"{m.replica.name} off {m.cluster}/{','.join(m.pools)} for "
            + (m.demand.split("/", 1)[1] if _ours(m.demand, ns) else "a deployment of another namespace")
            for m in making
        )
        message = (
            f"Moving {_count(len(making), 'replica')} to make room for unplaced demand of other deployments: {what}. "
            "Each leaves once its successor elsewhere is Ready."
        )
        event(rsp, warning=False, reason=names.REASON_MAKING_ROOM, message=message)
    waiting = [m for m in result.moves if m.demand == me]
    if waiting:
        what = "; ".join(
            (m.holder.split("/", 1)[1] if m.replica.namespace == ns else "a replica of another namespace")
            + f" off {m.cluster}/{','.join(m.pools)}"
            for m in waiting
        )
        message = f"Waiting for {_count(len(waiting), 'replica')} of other deployments to move and make room: {what}."
        event(rsp, warning=False, reason=names.REASON_WAITING_FOR_ROOM, message=message)


# What a deployment's answer needs of the XR when its spec is too large to convert.
_OUTLINE = {
    "metadata": None,
    "status": None,
    "spec": {"replicas": None, "template": {"spec": {"clusterSelector": {"matchLabels": None}}}},
}


def _problem(e: SpecError) -> Condition:
    return Condition(type=names.CONDITION_REPLICAS_SCHEDULED, status="False", reason=e.reason, message=str(e))


def handle(req: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
    own = observed_of_kind(req, names.KIND_REPLICA)
    try:
        bounds.check(names.KIND_DEPLOYMENT, req.observed.composite.resource)
    except SpecError as e:
        xr = project(req.observed.composite.resource, _OUTLINE)
        requirements.declare(rsp, xr)
        _retain_only(rsp, xr, own, _problem(e))
        return
    xr = to_dict(req.observed.composite.resource)
    notes.report_ignored(rsp, xr)
    declared = requirements.declare(rsp, xr)
    if requirements.unresolved(req, declared):
        _retain_only(rsp, xr, own, None)
        return
    try:
        inputs = gather(req, xr, own)
        rolled = reconcile_inputs(inputs, xr, now=datetime.now(UTC), matcher=DeviceMatcher(results=SELECTOR_RESULTS))
    except SpecError as e:
        _retain_only(rsp, xr, own, _problem(e))
        return
    try:
        _compose(rsp, xr, own, inputs, rolled)
        size = rsp.ByteSize()
        about = ""
    except ResponseTooLargeError as e:
        size = e.size
        about = "about "
    if size > limits.MAX_RESPONSE_BYTES:
        # Crossplane would refuse this answer on every call: send the existing replicas, and why.
        rsp.CopyFrom(response.to(req))
        notes.report_ignored(rsp, xr)
        requirements.declare(rsp, xr)
        _retain_only(rsp, xr, own, _too_large(size, about))


def _too_large(size: int, about: str) -> Condition:
    message = (
        f"the desired state is {about}{limits.mib(size)}, over the {limits.mib(limits.MAX_RESPONSE_BYTES)} a function "
        "response may carry (Crossplane's gRPC receive limit, which no setting raises): the existing replicas "
        "are kept and nothing new is composed; lower spec.replicas or what each replica carries (pod template, env)"
    )
    return Condition(
        type=names.CONDITION_REPLICAS_SCHEDULED,
        status="False",
        reason=names.REASON_RESPONSE_TOO_LARGE,
        message=message,
    )
