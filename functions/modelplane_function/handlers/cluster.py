"""InferenceCluster: publish the schedulable view of the node pools as `status.gpuPools` (with what
Modelplane's ModelCache composition reads, `api.relayed_status`), and keep the cluster from being
deleted while ModelReplicas run on it.

Requirements, declared identically on every call (they depend only on the observed XR): the
ModelReplicas on this cluster (by the `modelplane.ai/cluster` label when the name can be a label
value, else every ModelReplica, filtered by spec.clusterName), and each InferenceClass a pool
names in `className`. While one is unresolved, what depends on it stays as observed: the guard
until the replicas are known, the published pools until the classes are.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from crossplane.function import response
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane import api, names
from modelplane.api.usage import KIND_CLUSTER_USAGE, cluster_usage
from modelplane.errors import SpecError
from modelplane.model import kserve_assumed
from modelplane.scheduler import stack

from modelplane_function.handlers import notes
from modelplane_function.handlers.conditions import Condition, report
from modelplane_function.handlers.convert import to_dict, to_struct
from modelplane_function.handlers.keep import keep, observed_of_kind

REPLICAS = "replicas"
GUARD = "replica-guard"  # composition resource name of the ClusterUsage
_LABEL_VALUE_MAX = 63


def _class_requirement(class_name: str) -> str:
    return f"class-{class_name}"


def _name(xr: Mapping[str, Any]) -> str:
    meta = xr.get("metadata")
    return str(meta.get("name") or "") if isinstance(meta, Mapping) else ""  # pyright: ignore[reportUnknownMemberType]


def _declare(rsp: fnv1.RunFunctionResponse, xr: Mapping[str, Any]) -> tuple[str, ...]:
    """Declare the requirements; return their names."""
    name = _name(xr)
    # A cluster name (a DNS subdomain) longer than 63 characters cannot be a label value to select by.
    by_label = {names.LABEL_CLUSTER: name} if name and len(name) <= _LABEL_VALUE_MAX else None
    response.require_resources(rsp, REPLICAS, names.API_VERSION, names.KIND_REPLICA, match_labels=by_label)
    declared = [REPLICAS]
    for class_name in api.class_names(xr):
        response.require_resources(
            rsp, _class_requirement(class_name), names.API_VERSION, "InferenceClass", match_name=class_name
        )
        declared.append(_class_requirement(class_name))
    return tuple(declared)


def _items(req: fnv1.RunFunctionRequest, name: str) -> list[dict[str, Any]]:
    found = req.required_resources.get(name)  # .get: bracket access would insert the key
    return [] if found is None else [to_dict(item.resource) for item in found.items]


def _hosted(replicas: list[dict[str, Any]], cluster: str) -> list[str]:
    """`namespace/name` of the replicas on `cluster`, sorted; read leniently: an unreadable replica still counts."""
    out: set[str] = set()
    for obj in replicas:
        meta = obj.get("metadata")
        meta = meta if isinstance(meta, Mapping) else {}
        labels = meta.get("labels")  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
        label = labels.get(names.LABEL_CLUSTER) if isinstance(labels, Mapping) else None  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
        spec = obj.get("spec")
        pinned = spec.get("clusterName") if isinstance(spec, Mapping) else None  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
        if cluster in (label, pinned):
            out.add(f"{meta.get('namespace', '')}/{meta.get('name', '')}")  # pyright: ignore[reportUnknownMemberType]
    return sorted(out)


def _guard(rsp: fnv1.RunFunctionResponse, cluster: str, hosted: list[str]) -> None:
    """Compose the ClusterUsage while replicas run here; ready at once, so the cluster never reads as not Ready."""
    if not hosted:
        return
    desired = rsp.desired.resources[GUARD]
    desired.resource.CopyFrom(to_struct(cluster_usage(cluster, hosted)))
    desired.ready = fnv1.READY_TRUE


def _published(xr: Mapping[str, Any]) -> dict[str, Any] | None:
    status = xr.get("status")
    if not isinstance(status, Mapping):
        return None
    kept = {k: status[k] for k in ("gpuPools", "providerConfigRef", "cache") if k in status}  # pyright: ignore[reportUnknownVariableType]
    return kept or None


def _keep_published(rsp: fnv1.RunFunctionResponse, xr: Mapping[str, Any]) -> None:
    """Keep what was published last: the scheduler reads it, and a bad edit must not empty a cluster."""
    published = _published(xr)
    if published is not None:
        rsp.desired.composite.resource.MergeFrom(to_struct({"status": published}))


def _publish(req: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse, xr: Mapping[str, Any]) -> None:
    classes = {}
    for class_name in api.class_names(xr):
        found = _items(req, _class_requirement(class_name))
        classes[class_name] = found[0] if found else None
    try:
        pools = api.gpu_pools_status(xr, classes)
    except SpecError as e:
        _keep_published(rsp, xr)
        c = Condition(type=names.CONDITION_POOLS_PUBLISHED, status="False", reason=e.reason, message=str(e))
        report(rsp, xr, c, warn=True)
        return
    # and what Modelplane's ModelCache composition reads to stage caches here
    rsp.desired.composite.resource.MergeFrom(to_struct({"status": {"gpuPools": pools, **api.relayed_status(xr)}}))
    message = f"Published {len(pools)} GPU pools."
    if not _reachable(xr):
        message += (
            " spec.providerConfigRef is not set: replicas placed here cannot be rendered until it names the"
            " ClusterProviderConfig that reaches this cluster."
        )
    assumed = kserve_assumed(api.kserve_version(xr))
    if assumed is not None:
        message += " " + assumed
    said = stack.note(api.stack(xr))
    if said is not None:
        message += " " + said
    c = Condition(type=names.CONDITION_POOLS_PUBLISHED, status="True", reason=names.REASON_PUBLISHED, message=message)
    report(rsp, xr, c)


def _reachable(xr: Mapping[str, Any]) -> bool:
    """Whether the cluster names a ProviderConfig (ours in spec, or one Modelplane published in status)."""
    for part in ("spec", "status"):
        section = xr.get(part)
        ref = section.get("providerConfigRef") if isinstance(section, Mapping) else None  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
        if isinstance(ref, Mapping) and ref.get("name"):  # pyright: ignore[reportUnknownMemberType]
            return True
    return False


def handle(req: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
    xr = to_dict(req.observed.composite.resource)
    declared = _declare(rsp, xr)
    if REPLICAS in req.required_resources:
        _guard(rsp, _name(xr), _hosted(_items(req, REPLICAS), _name(xr)))
    else:
        keep(rsp, {k: v for k, v in observed_of_kind(req, KIND_CLUSTER_USAGE).items() if k == GUARD})
    if all(name in req.required_resources for name in declared if name != REPLICAS):
        _publish(req, rsp, xr)
    else:
        _keep_published(rsp, xr)
    notes.report_ignored(rsp, xr)
