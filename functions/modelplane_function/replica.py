"""ModelReplica: render the replica's workload objects and report whether they came up.

Each rendered manifest is a provider-kubernetes Object, ready when its observed Ready condition is
True. The replica is ready when every Object marked as a readiness source (the LLMInferenceService
Objects) is. When the replica cannot be rendered, the Objects it already composes are kept.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane import api, names
from modelplane.errors import SpecError
from modelplane.render import render_notes, render_replica

from modelplane_function import notes
from modelplane_function.conditions import Condition, is_ready, report
from modelplane_function.convert import to_dict, to_struct
from modelplane_function.keep import keep


def _ready_condition(keys: Sequence[str], observed: Mapping[str, Mapping[str, Any]]) -> Condition:
    unready = [k for k in keys if not is_ready(observed.get(k))]
    if keys and not unready:
        return Condition(
            type=names.CONDITION_REPLICA_READY,
            status="True",
            reason=names.REASON_READY,
            message=f"{len(keys)} of {len(keys)} serving objects are ready.",
        )
    message = f"{len(keys) - len(unready)} of {len(keys)} serving objects are ready"
    message += f"; waiting for {', '.join(unready)}." if unready else "."
    return Condition(type=names.CONDITION_REPLICA_READY, status="False", reason=names.REASON_NOT_READY, message=message)


def handle(req: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
    xr = to_dict(req.observed.composite.resource)
    notes.report_ignored(rsp, xr)
    observed = {key: to_dict(r.resource) for key, r in sorted(req.observed.resources.items())}
    try:
        replica = api.parse_replica(xr)
        rendered = render_replica(replica)
    except SpecError as e:
        keep(rsp, observed)
        c = Condition(type=names.CONDITION_REPLICA_RENDERED, status="False", reason=e.reason, message=str(e))
        report(rsp, xr, c, warn=True)
        report(rsp, xr, _ready_condition(sorted(observed), observed))
        return
    for obj in rendered:
        desired = rsp.desired.resources[obj.key]
        desired.resource.CopyFrom(to_struct(obj.manifest))
        if is_ready(observed.get(obj.key)):
            desired.ready = fnv1.READY_TRUE
    c = Condition(
        type=names.CONDITION_REPLICA_RENDERED,
        status="True",
        reason=names.REASON_RENDERED,
        message=" ".join([f"Rendered {len(rendered)} objects.", *render_notes(replica)]),
    )
    report(rsp, xr, c)
    report(rsp, xr, _ready_condition(sorted(o.key for o in rendered if o.readiness_source), observed))
