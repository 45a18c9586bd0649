"""ModelDeployment: read the fleet, schedule, compose one ModelReplica per placed replica.

Safety rule: nothing the XR already composes is dropped unless the scheduler decided so from
complete, valid input. An unresolved requirement, an invalid spec or selector, an empty cluster
list or an unparsable fleet object all end in retain-only: every observed ModelReplica is re-emitted
and the problem is reported in the ReplicasScheduled condition.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane import api, names
from modelplane.devices import DeviceMatcher, SelectorResults
from modelplane.errors import SpecError
from modelplane.model import Cluster, Deployment, ModelReplica
from modelplane.scheduler import ScheduleResult, schedule

from modelplane_function import notes, requirements
from modelplane_function.conditions import Condition, event, is_ready, report
from modelplane_function.convert import to_dict, to_struct
from modelplane_function.keep import keep, observed_of_kind

# Selector results outlive a call: every deployment's call sees the same fleet, so after the first
# one no CEL is evaluated until a device kind or a selector changes.
SELECTOR_RESULTS = SelectorResults()


@dataclass(frozen=True, slots=True, kw_only=True)
class Inputs:
    """Everything schedule() needs, parsed from one request."""

    deployment: Deployment
    clusters: tuple[Cluster, ...]
    replicas: tuple[ModelReplica, ...]


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


def gather(req: fnv1.RunFunctionRequest, xr: Mapping[str, Any], own: Mapping[str, Mapping[str, Any]]) -> Inputs:
    """Parse the deployment and the fleet from a request whose requirements are resolved.

    `own` holds the ModelReplicas this XR composes (observed): they count even when the required
    list (a cache, in a real control plane) lags behind.
    """
    namespaces = requirements.items(req, requirements.NAMESPACE)
    labels = _meta(namespaces[0]).get("labels") if namespaces else None
    labels = labels if isinstance(labels, Mapping) else {}
    deployment = api.parse_deployment(xr, namespace_labels=labels)
    if not requirements.structs(req, requirements.CLUSTERS) and deployment.replicas > 0:
        if deployment.cluster_selector is None:
            msg = "no InferenceCluster exists to place replicas on"
        else:
            msg = "no InferenceCluster matches the deployment's clusterSelector"
        raise NoClustersError(msg)
    clusters = requirements.clusters(req)
    own_by_id: dict[tuple[str, str], dict[str, Any]] = {}
    for obj in own.values():
        meta = _meta(obj)
        own_by_id[(str(meta.get("namespace", "")), str(meta.get("name", "")))] = dict(obj)
    owned = _parse_all(names.KIND_REPLICA, list(own_by_id.values()), api.parse_replica)
    # What this XR composes is its own even without a deployment label (which parsing reads as "no
    # deployment"): dropped from desired state, it would be deleted.
    owned = [r if r.deployment else replace(r, deployment=deployment.name) for r in owned]
    by_id = {**requirements.replicas(req, skip=frozenset(own_by_id)), **dict(zip(own_by_id, owned, strict=True))}
    replicas = [by_id[k] for k in sorted(by_id)]
    return Inputs(deployment=deployment, clusters=tuple(clusters), replicas=tuple(replicas))


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _ready_condition(ready: int, desired: int) -> Condition:
    message = f"{ready} of {desired} replicas are ready."
    typ = names.CONDITION_REPLICAS_READY
    if ready >= desired:
        return Condition(type=typ, status="True", reason=names.REASON_ALL_READY, message=message)
    return Condition(type=typ, status="False", reason=names.REASON_NOT_ALL_READY, message=message)


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
    """Keep every observed replica; report `problem` (None: waiting for requirements, say nothing)."""
    keep(rsp, own)
    ready = sum(1 for obj in own.values() if is_ready(obj))
    status: dict[str, Any] = {"replicas": {"total": len(own), "ready": ready}}
    observed_status = xr.get("status")
    observed_status = observed_status if isinstance(observed_status, Mapping) else {}
    # What placement and diagnosis the XR shows stays until the function can decide again.
    status.update({k: observed_status[k] for k in ("placement", "unplaced") if k in observed_status})
    rsp.desired.composite.resource.MergeFrom(to_struct({"status": status}))
    if problem is None:
        return
    report(rsp, xr, problem, warn=True)
    report(rsp, xr, _ready_condition(ready, _desired_count(xr, len(own))))


def _scheduled_condition(result: ScheduleResult) -> Condition:
    diagnosis = result.diagnosis
    status = "False" if diagnosis.unplaced else "True"
    return Condition(
        type=names.CONDITION_REPLICAS_SCHEDULED, status=status, reason=diagnosis.reason(), message=diagnosis.message()
    )


def _compose(
    rsp: fnv1.RunFunctionResponse,
    xr: Mapping[str, Any],
    own: Mapping[str, Mapping[str, Any]],
    inputs: Inputs,
    result: ScheduleResult,
) -> None:
    key_of_name = {str((obj.get("metadata") or {}).get("name")): key for key, obj in own.items()}
    composed: list[ModelReplica] = []
    for r in result.replicas:
        key = key_of_name.get(r.name, replica_key(r))
        desired = rsp.desired.resources[key]
        desired.resource.CopyFrom(to_struct(api.replica_manifest(r)))
        # Readiness is what this XR observes of its composed replica, not what the fleet list says.
        ready_now = is_ready(own.get(key))
        if ready_now:
            desired.ready = fnv1.READY_TRUE
        composed.append(replace(r, ready=ready_now))
    ready = sum(r.ready for r in composed)
    rsp.desired.composite.resource.MergeFrom(to_struct({"status": api.deployment_status(composed, result.diagnosis)}))
    report(rsp, xr, _scheduled_condition(result), warn=True)
    report(rsp, xr, _ready_condition(ready, inputs.deployment.replicas))
    placed = [r for r in result.replicas if r.name in result.created]
    if placed:
        where = ", ".join(f"{r.name} on {r.cluster}" for r in placed)
        message = f"Placed {_count(len(placed), 'new replica')}: {where}."
        event(rsp, warning=False, reason=names.REASON_REPLICAS_PLACED, message=message)
    if result.removed:
        what = ", ".join(f"{r.name} from {r.cluster} ({r.reason})" for r in result.removed)
        message = f"Removed {_count(len(result.removed), 'replica')}: {what}."
        event(rsp, warning=False, reason=names.REASON_REPLICAS_REMOVED, message=message)


def handle(req: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
    xr = to_dict(req.observed.composite.resource)
    notes.report_ignored(rsp, xr)
    declared = requirements.declare(rsp, xr)
    own = observed_of_kind(req, names.KIND_REPLICA)
    if requirements.unresolved(req, declared):
        _retain_only(rsp, xr, own, None)
        return
    try:
        inputs = gather(req, xr, own)
        result = schedule(
            inputs.deployment, inputs.clusters, inputs.replicas, matcher=DeviceMatcher(results=SELECTOR_RESULTS)
        )
    except SpecError as e:
        problem = Condition(type=names.CONDITION_REPLICAS_SCHEDULED, status="False", reason=e.reason, message=str(e))
        _retain_only(rsp, xr, own, problem)
        return
    _compose(rsp, xr, own, inputs, result)
