"""What engine render does to the XR and its observed resources before the pipeline runs.

The XR gets a deterministic UID (UUIDv5 of its GVK, namespace and name) unless it has one, the
`crossplane.io/composite` label, its compositionRef and resourceRefs to the observed resources.
Observed composed resources are keyed by their composition-resource-name annotation and must be
controlled by the XR (when they name a controller) and live in its namespace.
"""

from __future__ import annotations

import copy
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from modelplane import names

from modelplane_function.cli.render.errors import RenderFailure

ANNOTATION_RESOURCE_NAME = "crossplane.io/composition-resource-name"
LABEL_COMPOSITE = "crossplane.io/composite"


def is_ours(obj: Mapping[str, Any], kind: str) -> bool:
    """Whether `obj` is a modelplane.ai object of `kind`."""
    return obj.get("kind") == kind and obj.get("apiVersion") == names.API_VERSION


def name_of(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("name") or "")


def namespace_of(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("namespace") or "")


def uid_of(xr: Mapping[str, Any]) -> str:
    """The XR's UID: its own, else the one engine render derives (Go uuid.NewSHA1 == Python uuid5)."""
    uid = (xr.get("metadata") or {}).get("uid")
    if uid:
        return str(uid)
    group, _, version = str(xr.get("apiVersion", "")).rpartition("/")
    gvk = f"{group}/{version}, Kind={xr.get('kind', '')}"
    return str(uuid.uuid5(uuid.UUID(int=0), f"{gvk}\x00{namespace_of(xr)}\x00{name_of(xr)}"))


def composite_label(xr: Mapping[str, Any]) -> str:
    labels = (xr.get("metadata") or {}).get("labels") or {}
    return str(labels.get(LABEL_COMPOSITE) or name_of(xr))


def controller_of(obj: Mapping[str, Any]) -> Mapping[str, Any] | None:
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or []:
        if ref.get("controller"):
            return ref
    return None


def resource_ref(obj: Mapping[str, Any], *, with_namespace: bool) -> dict[str, str]:
    ref = {"apiVersion": str(obj.get("apiVersion", "")), "kind": str(obj.get("kind", "")), "name": name_of(obj)}
    if with_namespace and namespace_of(obj):
        ref["namespace"] = namespace_of(obj)
    return ref


def sorted_refs(objs: Sequence[Mapping[str, Any]], *, with_namespace: bool) -> list[dict[str, str]]:
    refs = [resource_ref(o, with_namespace=with_namespace) for o in objs]
    return sorted(refs, key=lambda r: (r["apiVersion"], r["kind"], r["name"], r.get("namespace", "")))


def observed_by_key(xr: Mapping[str, Any], observed: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Observed composed resources of the XR by composition resource name, checked as engine render does."""
    uid, namespace = uid_of(xr), namespace_of(xr)
    out: dict[str, dict[str, Any]] = {}
    for original in observed:
        obj = copy.deepcopy(dict(original))
        meta = obj.setdefault("metadata", {})
        what = f"{obj.get('kind')} {name_of(obj)}"
        key = (meta.get("annotations") or {}).get(ANNOTATION_RESOURCE_NAME)
        if not key:
            msg = f"observed {what} has no {ANNOTATION_RESOURCE_NAME} annotation"
            raise RenderFailure(msg)
        controller = controller_of(obj)
        if controller is not None and controller.get("uid") and controller["uid"] != uid:
            msg = f"observed {what} is controlled by UID {controller['uid']}, not the XR's {uid}"
            raise RenderFailure(msg)
        if namespace:
            if meta.get("namespace") and meta["namespace"] != namespace:
                msg = f"observed {what} is in namespace {meta['namespace']}, not the XR's {namespace}"
                raise RenderFailure(msg)
            meta["namespace"] = namespace
        out[str(key)] = obj
    return dict(sorted(out.items()))


def observed_xr(xr: Mapping[str, Any], composition: str, observed: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The XR as the reconciler sees it at the start of the pipeline."""
    out = copy.deepcopy(dict(xr))
    meta = out.setdefault("metadata", {})
    meta["uid"] = uid_of(xr)
    meta["resourceVersion"] = "999"
    labels = meta.setdefault("labels", {})
    labels.setdefault(LABEL_COMPOSITE, name_of(xr))
    machinery = out.setdefault("spec", {}).setdefault("crossplane", {})
    machinery["compositionRef"] = {"name": composition}
    machinery["resourceRefs"] = sorted_refs(list(observed.values()), with_namespace=not namespace_of(xr))
    return out
