"""ModelReplica: render the replica's workload objects and report whether they came up.

Each rendered manifest is a provider-kubernetes Object, ready when its observed Ready condition is
True. The replica is ready when every Object marked as a readiness source (the LLMInferenceService
Objects) is; the composite states that readiness itself, since Crossplane would call a replica
that composes nothing ready. When the replica cannot be rendered, the Objects it already composes
are kept.

A ModelReplica is a decision any writer could forge, so the handler checks it against the
InferenceCluster it names before anything reaches that cluster: the cluster must admit the
replica's namespace (as the scheduler decides admission), let that namespace use the replica's KAI
queue and priority class (`scheduler.kai`), and the replica must go through the cluster's own
ProviderConfig into its own workload namespace. A multi-node engine on a cluster whose stack runs
it otherwise (`scheduler.stack`) cannot be rendered (CannotRender). A replica its cluster does not admit
composes nothing (its Objects are removed) and says so in ReplicaRendered, which every
deployment's ledger reads: such a replica holds no capacity.

A rename with `spec.replacing` keeps the superseded LLMInferenceServices (`superseded`); while
they serve and the new ones do not yet, the replica is Ready with ReplicaReady's reason
`Replacing`, which its deployment reads as "available, rename under way".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from crossplane.function import response
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane import api, names
from modelplane.errors import SpecError
from modelplane.model import Cluster, ModelReplica
from modelplane.render import RenderError, render_notes, render_replica
from modelplane.scheduler import kai, stack
from modelplane.scheduler.selectors import admits_namespace

from modelplane_function.handlers import bounds, claims, failures, notes, requirements
from modelplane_function.handlers.conditions import Condition, is_ready, report
from modelplane_function.handlers.convert import to_dict, to_struct
from modelplane_function.handlers.keep import keep
from modelplane_function.handlers.superseded import superseded

CLUSTER = "cluster"


class ClusterNotFoundError(SpecError):
    reason = names.REASON_CLUSTER_NOT_FOUND


class NotAdmittedError(SpecError):
    reason = names.REASON_NAMESPACE_NOT_ADMITTED


class SchedulingNotAllowedError(SpecError):
    reason = names.REASON_SCHEDULING_NOT_ALLOWED


class NamespaceNotFoundError(SpecError):
    reason = names.REASON_NAMESPACE_NOT_FOUND


def _ready_condition(
    keys: Sequence[str], observed: Mapping[str, Mapping[str, Any]], composed: Sequence[str]
) -> Condition:
    """Ready when every readiness source is; else which are not, and what any `composed` object says failed."""
    failing = {k: f for k in sorted(composed) if (f := failures.object_failure(k, observed.get(k))) is not None}
    unready = [k for k in keys if not is_ready(observed.get(k))]
    if keys and not unready and not failing:
        return Condition(
            type=names.CONDITION_REPLICA_READY,
            status="True",
            reason=names.REASON_READY,
            message=f"{len(keys)} of {len(keys)} serving objects are ready.",
        )
    message = f"{len(keys) - len(unready)} of {len(keys)} serving objects are ready"
    if failing:
        message += f"; {failures.listed(list(failing.values()))}"
    waiting = [k for k in unready if k not in failing]
    message += f"; waiting for {', '.join(waiting)}." if waiting else "."
    reason = names.REASON_OBJECT_FAILING if failing else names.REASON_NOT_READY
    return Condition(type=names.CONDITION_REPLICA_READY, status="False", reason=reason, message=message)


def _string_at(obj: Mapping[str, Any], *path: str) -> str:
    value: Any = obj
    for key in path:
        value = value.get(key) if isinstance(value, Mapping) else None  # pyright: ignore[reportUnknownMemberType]
    return value if isinstance(value, str) else ""


def _declare(rsp: fnv1.RunFunctionResponse, xr: Mapping[str, Any]) -> tuple[str, ...]:
    """Require the InferenceCluster the replica names (as parse_replica reads it) and its Namespace."""
    declared: list[str] = []
    cluster = _string_at(xr, "metadata", "labels", names.LABEL_CLUSTER) or _string_at(xr, "spec", "clusterName")
    if cluster:
        response.require_resources(rsp, CLUSTER, names.API_VERSION, names.KIND_CLUSTER, match_name=cluster)
        declared.append(CLUSTER)
    namespace = _string_at(xr, "metadata", "namespace")
    if namespace:
        response.require_resources(rsp, requirements.NAMESPACE, "v1", "Namespace", match_name=namespace)
        declared.append(requirements.NAMESPACE)
    return tuple(declared)


def _checked(req: fnv1.RunFunctionRequest, replica: ModelReplica) -> ModelReplica:
    """The replica, once its cluster is known to take it; SpecError (or a subclass) says why not."""
    for what, value in (("deployment", replica.deployment), ("cluster", replica.cluster)):
        problem = names.label_value_problem(value)
        if problem is not None:
            msg = f"{what} name {value[:80]!r}: {problem}"
            raise SpecError(msg)
    clusters, invalid = requirements.clusters(req, CLUSTER)
    cluster: Cluster | None = next((c for c in clusters if c.name == replica.cluster), None)
    if cluster is None:
        if replica.cluster in invalid:
            raise SpecError(invalid[replica.cluster])
        msg = (
            f"InferenceCluster {replica.cluster} not found: nothing is rendered, the objects already composed are kept"
        )
        raise ClusterNotFoundError(msg)
    admitted = admits_namespace(cluster, replica.namespace, requirements.namespace_labels(req, replica.namespace))
    if admitted is None:
        msg = (
            f"InferenceCluster {cluster.name} admits namespaces by label and Namespace {replica.namespace} was "
            "not found: nothing new is rendered, the objects already composed are kept"
        )
        raise NamespaceNotFoundError(msg)
    if not admitted:
        msg = (
            f"InferenceCluster {cluster.name} does not admit namespace {replica.namespace} "
            "(allowedNamespaces, allowedNamespaceSelector): nothing is rendered there"
        )
        raise NotAdmittedError(msg)
    refused = kai.refusal(
        cluster, replica.namespace, queue=replica.queue, priority_class_name=replica.priority_class_name
    )
    if refused is not None:
        msg = f"{refused}: nothing new is rendered, the objects already composed are kept"
        raise SchedulingNotAllowedError(msg)
    if (replica.provider_config_name, replica.workload_namespace) != (
        cluster.provider_config_name,
        cluster.workload_namespace,
    ):
        msg = (
            f"spec.providerConfigRef {replica.provider_config_name!r} and spec.workloadNamespace "
            f"{replica.workload_namespace!r} must be those of InferenceCluster {cluster.name} "
            f"({cluster.provider_config_name!r}, {cluster.workload_namespace!r})"
        )
        raise SpecError(msg)
    unsupported = stack.refusal(cluster, replica.engines)
    if unsupported is not None:
        msg = f"{unsupported}: nothing new is rendered, the objects already composed are kept"
        raise RenderError(msg)
    return replica


def handle(req: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
    observed = {key: to_dict(r.resource) for key, r in sorted(req.observed.resources.items())}
    try:
        bounds.check(names.KIND_REPLICA, req.observed.composite.resource)
    except SpecError as e:
        _not_rendered(rsp, {}, observed, e)
        return
    xr = to_dict(req.observed.composite.resource)
    notes.report_ignored(rsp, xr)
    declared = _declare(rsp, xr)
    if requirements.unresolved(req, declared):
        keep(rsp, observed)
        _keep_rendered_revision(rsp, xr)
        rsp.desired.composite.ready = fnv1.READY_FALSE
        return
    try:
        replica = _checked(req, api.parse_replica(xr))
        rendered = render_replica(replica)
    except NotAdmittedError as e:
        _not_rendered(rsp, xr, {}, e)  # tenancy wins: what it composes on that cluster goes
        return
    except SpecError as e:
        _not_rendered(rsp, xr, observed, e)
        return
    if replica.revision:
        rsp.desired.composite.resource.MergeFrom(to_struct({"status": {"renderedRevision": replica.revision}}))
    for obj in rendered:
        desired = rsp.desired.resources[obj.key]
        desired.resource.CopyFrom(to_struct(obj.manifest))
        if is_ready(observed.get(obj.key)):
            desired.ready = fnv1.READY_TRUE
    serving = superseded(observed, [o.key for o in rendered], replacing=bool(replica.replacing))
    keep(rsp, serving)
    in_use = claims.still_used(observed, {o.key for o in rendered})
    keep(rsp, in_use)
    kept = (
        [f"Kept {', '.join(sorted(serving))} (superseded) serving until the new LLMInferenceServices are Ready."]
        if serving
        else []
    )
    kept += (
        [f"Kept {', '.join(sorted(in_use))} (no longer rendered) while the workload may still use it."]
        if in_use
        else []
    )
    c = Condition(
        type=names.CONDITION_REPLICA_RENDERED,
        status="True",
        reason=names.REASON_RENDERED,
        message=" ".join([f"Rendered {len(rendered)} objects.", *kept, *render_notes(replica)]),
    )
    report(rsp, xr, c)
    sources = sorted(o.key for o in rendered if o.readiness_source)
    ready = _ready_condition(sources, observed, [o.key for o in rendered])
    if ready.status != "True" and serving and all(is_ready(o) for o in serving.values()):
        # The superseded objects serve: the replica is available while its new ones come up.
        ready = Condition(
            type=names.CONDITION_REPLICA_READY,
            status="True",
            reason=names.REASON_REPLACING,
            message=f"Serving through {', '.join(sorted(serving))} while the new objects come up: {ready.message}",
        )
    _report_ready(rsp, xr, ready)


def _not_rendered(
    rsp: fnv1.RunFunctionResponse,
    xr: Mapping[str, Any],
    kept: Mapping[str, Mapping[str, Any]],
    e: SpecError,
) -> None:
    keep(rsp, kept)
    if kept:
        _keep_rendered_revision(rsp, xr)
    c = Condition(type=names.CONDITION_REPLICA_RENDERED, status="False", reason=e.reason, message=str(e))
    report(rsp, xr, c, warn=True)
    _report_ready(rsp, xr, _ready_condition(sorted(kept), kept, list(kept)))


def _keep_rendered_revision(rsp: fnv1.RunFunctionResponse, xr: Mapping[str, Any]) -> None:
    """status.renderedRevision as observed: the objects kept as they are still render that revision."""
    status = xr.get("status")
    rendered = status.get("renderedRevision") if isinstance(status, Mapping) else None  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    if isinstance(rendered, str) and rendered:
        rsp.desired.composite.resource.MergeFrom(to_struct({"status": {"renderedRevision": rendered}}))


def _report_ready(rsp: fnv1.RunFunctionResponse, xr: Mapping[str, Any], c: Condition) -> None:
    report(rsp, xr, c)
    rsp.desired.composite.ready = fnv1.READY_TRUE if c.status == "True" else fnv1.READY_FALSE
