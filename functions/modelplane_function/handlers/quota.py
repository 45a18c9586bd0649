"""FleetQuota: the platform's fleet-wide GPU quota. It composes nothing: it checks itself and publishes
the namespaces its selector selects.

Every ModelDeployment reads the FleetQuotas; one they cannot read is left out there (a quota
only constrains, and one bad quota must not stop every deployment), so it is reported here, on
the object itself, where the platform that wrote it looks. A deployment knows its own
namespace's labels; for every other namespace it reads `status.namespaces`, which this reconcile
works out from the Namespaces, so no deployment needs every Namespace of the control plane.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from crossplane.function import response
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane import api, names
from modelplane.api.quota import MAX_PUBLISHED
from modelplane.errors import SpecError
from modelplane.quota import FleetQuota
from modelplane.scheduler.selectors import selector_matches

from modelplane_function.handlers.conditions import Condition, report
from modelplane_function.handlers.convert import to_dict, to_struct
from modelplane_function.handlers.requirements import items

NAMESPACES = "namespaces"


def handle(req: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
    xr = to_dict(req.observed.composite.resource)
    try:
        quota = api.parse_quota({**xr, "status": {}})  # what the spec says, before what was published
    except SpecError as e:
        problem = f"deployments cannot read this quota, so it holds for nobody: {e}"
        report(
            rsp,
            xr,
            Condition(type=names.CONDITION_QUOTA_ACCEPTED, status="False", reason=e.reason, message=problem),
            warn=True,
        )
        rsp.desired.composite.ready = fnv1.READY_FALSE
        return
    if quota.namespace_selector is not None:
        response.require_resources(rsp, NAMESPACES, "v1", "Namespace")
        if NAMESPACES in req.required_resources:
            found = _selected(quota, items(req, NAMESPACES))
            rsp.desired.composite.resource.MergeFrom(to_struct({"status": {"namespaces": found}}))
    kinds = ", ".join(
        f"{r.name}: {r.guaranteed} guaranteed" + (f", at most {r.limit}" if r.limit is not None else "")
        for r in quota.resources
    )
    message = f"preemption {quota.preemption}; " + (kinds or "no GPU kinds")
    report(
        rsp,
        xr,
        Condition(type=names.CONDITION_QUOTA_ACCEPTED, status="True", reason=names.REASON_ACCEPTED, message=message),
    )
    rsp.desired.composite.ready = fnv1.READY_TRUE


def selected(obj: Mapping[str, Any], namespaces: list[dict[str, Any]]) -> list[str]:
    """The namespaces a FleetQuota object's selector selects (SpecError when the quota cannot be read)."""
    quota = api.parse_quota({**obj, "status": {}})
    return _selected(quota, namespaces) if quota.namespace_selector is not None else []


def _selected(quota: FleetQuota, namespaces: list[dict[str, Any]]) -> list[str]:
    """Names of the Namespaces whose labels the quota's selector matches, sorted, at most MAX_PUBLISHED."""
    selector = quota.namespace_selector
    assert selector is not None  # only called with a selector
    out: set[str] = set()
    for obj in namespaces:
        meta = obj.get("metadata")
        if not isinstance(meta, Mapping):
            continue
        name = meta.get("name")  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
        labels = meta.get("labels")  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
        labels = {str(k): str(v) for k, v in labels.items()} if isinstance(labels, Mapping) else {}  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
        if isinstance(name, str) and name and selector_matches(selector, labels):
            out.add(name)
    return sorted(out)[:MAX_PUBLISHED]
