"""ModelDemand: a deployment's stated demand. It composes nothing; the check is that others can read it.

The owning ModelDeployment writes it (modelplane.stated); every other deployment reads it. A
statement the readers would skip (one not matching the schema, say) is reported here, on the
object itself, where the platform can see it: the readers stay silent per tenant by design.
"""

from __future__ import annotations

from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane import api, names
from modelplane.errors import SpecError

from modelplane_function.handlers import bounds
from modelplane_function.handlers.conditions import Condition, report
from modelplane_function.handlers.convert import to_dict


def handle(req: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
    xr = to_dict(req.observed.composite.resource)
    try:
        bounds.check(names.KIND_DEMAND, req.observed.composite.resource)
        stated = api.parse_demand(xr)
    except SpecError as e:
        problem = f"other deployments cannot read this statement, so they hold no room for it: {e}"
        report(
            rsp,
            xr,
            Condition(type=names.CONDITION_DEMAND_STATED, status="False", reason=e.reason, message=problem),
            warn=True,
        )
        rsp.desired.composite.ready = fnv1.READY_FALSE
        return
    if not stated.placeable():
        message = f"{stated.name} states no demand: it has no pool to ask for, or it cannot decide now"
    else:
        replicas = f"{stated.replicas} replica" + ("" if stated.replicas == 1 else "s")
        devices = f"{stated.devices} device" + ("" if stated.devices == 1 else "s")
        message = f"{stated.name} states {replicas} of {devices} each"
    report(
        rsp,
        xr,
        Condition(type=names.CONDITION_DEMAND_STATED, status="True", reason=names.REASON_STATED, message=message),
    )
    rsp.desired.composite.ready = fnv1.READY_TRUE
