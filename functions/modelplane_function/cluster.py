"""InferenceCluster: publish the schedulable view of the node pools as `status.gpuPools`."""

from __future__ import annotations

from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane import api, names
from modelplane.errors import SpecError

from modelplane_function.conditions import Condition, report
from modelplane_function.convert import to_dict, to_struct


def handle(req: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
    observed = to_dict(req.observed.composite.resource)
    try:
        pools = api.gpu_pools_status(observed)
    except SpecError as e:
        # Keep what was published last: the scheduler reads it, and a bad edit must not empty a cluster.
        status = observed.get("status") or {}
        if "gpuPools" in status:
            rsp.desired.composite.resource.MergeFrom(to_struct({"status": {"gpuPools": status["gpuPools"]}}))
        c = Condition(type=names.CONDITION_POOLS_PUBLISHED, status="False", reason=e.reason, message=str(e))
        report(rsp, observed, c, warn=True)
        return
    rsp.desired.composite.resource.MergeFrom(to_struct({"status": {"gpuPools": pools}}))
    c = Condition(
        type=names.CONDITION_POOLS_PUBLISHED,
        status="True",
        reason=names.REASON_PUBLISHED,
        message=f"Published {len(pools)} GPU pools.",
    )
    report(rsp, observed, c)
