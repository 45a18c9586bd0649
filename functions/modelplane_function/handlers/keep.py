"""Retain-only desired state: keep what the XR already composes when it cannot decide anything new.

Dropping a composed resource from desired state deletes it, so on bad input or partial information
the function re-emits every observed resource of the kinds it owns. Only the fields the function
owns are re-emitted (identity, labels, spec): never status, managedFields or other server-set
metadata, and not `spec.crossplane`, which the child XR's own reconcile owns.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from modelplane_function.handlers.conditions import is_ready
from modelplane_function.handlers.convert import to_dict, to_struct


def minimal(obj: Mapping[str, Any]) -> dict[str, Any]:
    """The owned part of an observed composed resource."""
    meta = obj.get("metadata") or {}
    out_meta = {k: meta[k] for k in ("name", "namespace", "labels") if meta.get(k)}
    out: dict[str, Any] = {"apiVersion": obj.get("apiVersion"), "kind": obj.get("kind"), "metadata": out_meta}
    spec = obj.get("spec")
    if isinstance(spec, Mapping):
        out["spec"] = {k: v for k, v in spec.items() if k != "crossplane"}  # pyright: ignore[reportUnknownVariableType]
    return out


def observed_of_kind(req: fnv1.RunFunctionRequest, kind: str) -> dict[str, dict[str, Any]]:
    """Observed composed resources of one kind, by composition resource name."""
    out: dict[str, dict[str, Any]] = {}
    for key, r in sorted(req.observed.resources.items()):
        obj = to_dict(r.resource)
        if obj.get("kind") == kind:
            out[key] = obj
    return out


def keep(rsp: fnv1.RunFunctionResponse, observed: Mapping[str, Mapping[str, Any]]) -> None:
    """Re-emit each observed resource minimally under its key, ready when its Ready condition is True."""
    for key, obj in observed.items():
        desired = rsp.desired.resources[key]
        desired.resource.CopyFrom(to_struct(minimal(obj)))
        if is_ready(obj):
            desired.ready = fnv1.READY_TRUE
