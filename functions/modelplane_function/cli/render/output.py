"""Turning a pipeline's desired state into the documents render prints (engine flavour).

Composed resources: the observed name/namespace/generateName for an existing key, the XR's
namespace, the composite label, the composition-resource-name annotation, a controller
ownerReference and, without an explicit name, the engine's deterministic name. The XR: its input
metadata and spec (as with -x), resourceRefs, the desired status, and the conditions Responsive,
the function's custom ones, Synced and Ready. Every lastTransitionTime is 2024-01-01T00:00:00Z.
"""

from __future__ import annotations

import copy
import hashlib
import re
from collections.abc import Mapping, Sequence
from typing import Any

from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from modelplane_function.cli.render import yamlio
from modelplane_function.cli.render.errors import RenderFailure
from modelplane_function.cli.render.xr import (
    ANNOTATION_RESOURCE_NAME,
    LABEL_COMPOSITE,
    composite_label,
    name_of,
    namespace_of,
    sorted_refs,
    uid_of,
)
from modelplane_function.handlers.convert import to_dict

TRANSITION_TIME = "2024-01-01T00:00:00Z"
SYSTEM_CONDITIONS = frozenset({"Ready", "Synced", "Healthy", "Responsive"})
_STATUS = {fnv1.STATUS_CONDITION_TRUE: "True", fnv1.STATUS_CONDITION_FALSE: "False"}
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def generated_name(generate_name: str, owner_uid: str, key: str) -> str:
    """Engine render's name for a composed resource without one (crossplane internal/names)."""
    suffix = hashlib.sha256((owner_uid + key).encode()).hexdigest()[:12]
    parent = generate_name.rstrip("-") + "-"
    if len(parent) + len(suffix) > 63:  # noqa: PLR2004 - the DNS label limit
        cut = parent[:51]
        parent = cut if cut.endswith("-") else parent[:50] + "-"
    return parent + suffix


def composed(
    xr: Mapping[str, Any], key: str, resource: fnv1.Resource, observed: Mapping[str, Mapping[str, Any]]
) -> dict[str, Any]:
    obj = to_dict(resource.resource)
    meta = obj.setdefault("metadata", {})
    previous = (observed.get(key) or {}).get("metadata") or {}
    for field in ("name", "namespace", "generateName"):
        if previous.get(field):
            meta[field] = previous[field]
    label = composite_label(xr)
    if not meta.get("name") and not meta.get("generateName"):
        meta["generateName"] = f"{label}-"
    if namespace_of(xr):
        meta["namespace"] = namespace_of(xr)
    meta.setdefault("annotations", {})[ANNOTATION_RESOURCE_NAME] = key
    meta.setdefault("labels", {})[LABEL_COMPOSITE] = label
    owner = {
        "apiVersion": xr.get("apiVersion"),
        "kind": xr.get("kind"),
        "name": name_of(xr),
        "uid": uid_of(xr),
        "controller": True,
        "blockOwnerDeletion": True,
    }
    meta["ownerReferences"] = [r for r in meta.get("ownerReferences") or [] if not r.get("controller")] + [owner]
    if not meta.get("name"):
        meta["name"] = generated_name(meta["generateName"], uid_of(xr), key)
    if len(meta["name"]) > 253 or not _DNS_SUBDOMAIN.match(meta["name"]):  # noqa: PLR2004 - DNS-1123 subdomain
        msg = f"composed resource {key!r} has an invalid name {meta['name']!r}"
        raise RenderFailure(msg)
    return obj


def _condition(typ: str, status: str, reason: str, message: str = "") -> dict[str, str]:
    c = {"type": typ, "status": status, "reason": reason, "lastTransitionTime": TRANSITION_TIME}
    if message:
        c["message"] = message
    return c


def _unready_message(keys: Sequence[str]) -> str:
    keys = sorted(keys)
    if len(keys) > 3:  # noqa: PLR2004 - Crossplane lists three and counts the rest
        listed = f"{', '.join(keys[:3])}, and {len(keys) - 3} more"
    elif len(keys) == 3:  # noqa: PLR2004
        listed = f"{', '.join(keys[:2])}, and {keys[2]}"
    else:
        listed = ", ".join(keys)
    return f"Unready resources: {listed}"


def _ready(desired: fnv1.State) -> dict[str, str]:
    if desired.composite.ready == fnv1.READY_TRUE:
        return _condition("Ready", "True", "Available")
    if desired.composite.ready == fnv1.READY_FALSE:
        return _condition("Ready", "False", "Creating")
    unready = [k for k, r in desired.resources.items() if r.ready != fnv1.READY_TRUE]
    if unready:
        return _condition("Ready", "False", "Creating", _unready_message(unready))
    return _condition("Ready", "True", "Available")


def _set(conditions: list[dict[str, Any]], c: dict[str, Any]) -> None:
    """Replace the condition of the same type in place, else append (crossplane-runtime SetConditions)."""
    for i, existing in enumerate(conditions):
        if existing.get("type") == c["type"]:
            conditions[i] = c
            return
    conditions.append(c)


def merge(base: Any, override: Any) -> Any:
    """Deep merge of mappings, `override` winning; lists and scalars are replaced."""
    if isinstance(base, Mapping) and isinstance(override, Mapping):
        out = dict(base)  # pyright: ignore[reportUnknownArgumentType]
        for k, v in override.items():  # pyright: ignore[reportUnknownVariableType]
            out[k] = merge(out.get(k), v)
        return out
    return copy.deepcopy(override)


def xr_document(
    xr: Mapping[str, Any],
    desired: fnv1.State,
    conditions: Sequence[fnv1.Condition],
    composed_objs: Sequence[Mapping[str, Any]],
) -> dict[str, Any]:
    out = copy.deepcopy(dict(xr))
    desired_status = to_dict(desired.composite.resource).get("status") or {}
    status = merge(out.get("status") or {}, {k: v for k, v in desired_status.items() if k != "conditions"})
    listed: list[dict[str, Any]] = [dict(c) for c in status.get("conditions") or []]
    for c in listed:
        c["lastTransitionTime"] = TRANSITION_TIME
    _set(listed, _condition("Responsive", "True", "WatchCircuitClosed"))
    for c in conditions:
        if c.type not in SYSTEM_CONDITIONS:
            _set(listed, _condition(c.type, _STATUS.get(c.status, "Unknown"), c.reason, c.message))
    _set(listed, _condition("Synced", "True", "ReconcileSuccess"))
    _set(listed, _ready(desired))
    status["conditions"] = listed
    out["status"] = status
    refs = sorted_refs(list(composed_objs), with_namespace=not namespace_of(xr))
    out.setdefault("spec", {}).setdefault("crossplane", {})["resourceRefs"] = refs
    return out


def dump(docs: Sequence[Mapping[str, Any]]) -> str:
    """A YAML stream, `---` before each document, keys sorted, block style, no line folding."""
    return yamlio.dump_all(docs)


def resource_docs(
    xr: Mapping[str, Any], desired: fnv1.State, observed: Mapping[str, Mapping[str, Any]]
) -> list[tuple[str, dict[str, Any]]]:
    """Composed resources sorted by composition resource name."""
    return [(key, composed(xr, key, desired.resources[key], observed)) for key in sorted(desired.resources)]


__all__ = ["LABEL_COMPOSITE", "dump", "merge", "resource_docs", "xr_document"]
