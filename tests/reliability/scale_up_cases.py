"""examples/scale-up (scale_up.py) as the base the data-loss and blast-radius cases edit, and an outline.

Two replicas run (us-east-1 a100, eu-west-1 l40s, both Ready) and the deployment asks for four;
ap-south-1 and us-east-1's h100 pool are free. A response is summarised by `outline`: every
condition, result and status field as emitted, and per composed replica where it is, whether it is
ready, and whether it is the observed object re-emitted unchanged; nothing of the response is
left out except the replica manifests' unchanged parts.
"""

import copy
from typing import Any

from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane_function.handlers.convert import to_dict, to_struct
from modelplane_function.handlers.keep import minimal

from tests.function.conftest import as_dict
from tests.function.factories import namespace, request

from .scale_up import ScaleUp

_BASE = ScaleUp()
XR: dict[str, Any] = _BASE.xr
CLUSTERS = _BASE.clusters
FLEET_REPLICAS = _BASE.replicas
OBSERVED = _BASE.observed
NAMESPACE = namespace("team-chat")


def scale_up(
    *,
    xr: dict[str, Any] | None = None,
    clusters: list[dict[str, Any]] | None = None,
    replicas: list[dict[str, Any]] | None = None,
) -> fnv1.RunFunctionRequest:
    """The scale-up request, with any of its parts replaced."""
    return request(
        copy.deepcopy(xr or XR),
        observed=copy.deepcopy(OBSERVED),
        required={
            "clusters": copy.deepcopy(clusters if clusters is not None else CLUSTERS),
            "replicas": copy.deepcopy(replicas if replicas is not None else FLEET_REPLICAS),
            "namespace": [NAMESPACE],
        },
    )


def with_selectors(*selectors: str) -> dict[str, Any]:
    """The scale-up deployment with its gpu request's selectors replaced."""
    xr = copy.deepcopy(XR)
    request_ = xr["spec"]["template"]["spec"]["engines"][0]["members"][0]["nodeSelector"]["devices"][0]
    request_["selectors"] = [{"cel": s} for s in selectors]
    return xr


def outline(rsp: fnv1.RunFunctionResponse) -> dict[str, Any]:
    got = as_dict(rsp)
    echoes = {k: to_dict(to_struct(minimal(v))) for k, v in OBSERVED.items()}
    replicas: dict[str, Any] = {}
    for key, r in got["desired"].get("resources", {}).items():
        res = r["resource"]
        replicas[key] = {
            "cluster": res["spec"]["clusterName"],
            "index": res["metadata"]["labels"]["modelplane.ai/replica-index"],
            "pools": [m["nodePoolName"] for e in res["spec"]["engines"] for m in e["members"]],
            "ready": r.get("ready") == "READY_TRUE",
            "as observed": res == echoes.get(key),
        }
    composite = got["desired"].get("composite", {})
    return {
        "conditions": [
            (c["type"], c["status"].removeprefix("STATUS_CONDITION_"), c["reason"], c.get("message", ""))
            for c in got.get("conditions", [])
        ],
        "results": [
            (r["severity"].removeprefix("SEVERITY_"), r.get("reason", ""), r["message"]) for r in got.get("results", [])
        ],
        "ready": composite.get("ready"),
        "status": composite.get("resource", {}).get("status"),
        "replicas": replicas,
    }
