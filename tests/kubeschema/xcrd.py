"""The CustomResourceDefinition Crossplane creates for a CompositeResourceDefinition.

Restated from crossplane/crossplane-runtime pkg/xcrd (crd.go ForCompositeResource and
genCrdVersion, schemas.go), unchanged from the revision crossplane/crossplane pins
(a63da558, 2026-06-15) to runtime HEAD 4e7ed235 (2026-08-19):

- Of the XRD's version schema only the root's description and x-kubernetes-validations and
  `spec` and `status` survive; of those, properties, required, oneOf, description and
  x-kubernetes-validations (and spec's x-kubernetes-preserve-unknown-fields). Everything else
  the XRD declares at the root or on spec/status is dropped.
- `spec` is required; `metadata.name` is limited to 63 characters (the XR name is a label
  value) or the XRD's own lower maxLength.
- Crossplane's own fields then replace same-named XRD fields: under `spec.crossplane` for
  Namespaced and Cluster XRs (composition refs and selectors, compositionUpdatePolicy with the
  XRD's default, resourceRefs without a namespace for Namespaced XRs), directly under `spec`
  for LegacyCluster XRs (plus claimRef and writeConnectionSecretToRef); `status.conditions`
  always, `status.connectionDetails` and `status.claimConditionTypes` for LegacyCluster.
- Every version gets the status subresource, and the XRD's scale subresource when it has one.

Claim CRDs (v1 XRDs with claimNames) are not rendered: no API here has claims.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping
from typing import Any, cast

Schema = dict[str, Any]

_MAX_NAME_LENGTH = 63


class XrdError(ValueError):
    """Crossplane could not render a CRD from this XRD."""


def _string() -> Schema:
    return {"type": "string"}


def _ref() -> Schema:
    return {"type": "object", "required": ["name"], "properties": {"name": _string()}}


def _selector() -> Schema:
    labels = {"type": "object", "additionalProperties": _string()}
    return {"type": "object", "required": ["matchLabels"], "properties": {"matchLabels": labels}}


def spec_props(scope: str, update_policy: str | None) -> Schema:
    """CompositeResourceSpecProps."""
    policy: Schema = {"type": "string", "enum": ["Automatic", "Manual"]}
    if update_policy is not None:
        policy["default"] = update_policy
    ref_props = {"apiVersion": _string(), "name": _string(), "kind": _string()}
    if scope != "Namespaced":  # a namespaced XR composes only in its own namespace
        ref_props["namespace"] = _string()
    refs = {
        "type": "array",
        "x-kubernetes-list-type": "atomic",
        "items": {"type": "object", "required": ["apiVersion", "kind"], "properties": ref_props},
    }
    props: Schema = {
        "compositionRef": _ref(),
        "compositionSelector": _selector(),
        "compositionRevisionRef": _ref(),
        "compositionRevisionSelector": _selector(),
        "compositionUpdatePolicy": policy,
        "resourceRefs": refs,
    }
    if scope == "LegacyCluster":
        claim = ("apiVersion", "kind", "namespace", "name")
        props["claimRef"] = {"type": "object", "required": list(claim), "properties": {k: _string() for k in claim}}
        secret = {"name": _string(), "namespace": _string()}
        props["writeConnectionSecretToRef"] = {
            "type": "object",
            "required": ["name", "namespace"],
            "properties": secret,
        }
        return props
    description = "Configures how Crossplane will reconcile this composite resource"
    return {"crossplane": {"type": "object", "description": description, "properties": props}}


def status_props(scope: str) -> Schema:
    """CompositeResourceStatusProps."""
    condition = {
        "type": "object",
        "required": ["lastTransitionTime", "reason", "status", "type"],
        "properties": {
            "lastTransitionTime": {"type": "string", "format": "date-time"},
            "message": _string(),
            "reason": _string(),
            "status": _string(),
            "type": _string(),
            "observedGeneration": {"type": "integer", "format": "int64"},
        },
    }
    props: Schema = {
        "conditions": {
            "type": "array",
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["type"],
            "items": condition,
        }
    }
    if scope == "LegacyCluster":
        published = {"lastPublishedTime": {"type": "string", "format": "date-time"}}
        props["connectionDetails"] = {"type": "object", "properties": published}
        props["claimConditionTypes"] = {"type": "array", "x-kubernetes-list-type": "set", "items": _string()}
    return props


def scope_of(xrd: Mapping[str, Any]) -> str:
    spec = cast("Mapping[str, Any]", xrd.get("spec") or {})
    legacy = str(xrd.get("apiVersion", "")).endswith("/v1")
    return str(spec.get("scope") or ("LegacyCluster" if legacy else "Namespaced"))


def render_crd(xrd: Mapping[str, Any]) -> Schema:
    """ForCompositeResource: the CRD of the XRD's composite resource."""
    spec = _mapping(xrd.get("spec"))
    names = _mapping(spec.get("names"))
    if not isinstance(spec.get("group"), str) or not names.get("kind") or not names.get("plural"):
        msg = "spec.group, spec.names.kind and spec.names.plural are required"
        raise XrdError(msg)
    scope = scope_of(xrd)
    update_policy = spec.get("defaultCompositionUpdatePolicy")
    listed = spec.get("versions")
    versions = (
        [_version(v, i, scope, update_policy) for i, v in enumerate(cast("list[Any]", listed))]
        if isinstance(listed, list)
        else []
    )
    if not versions:
        msg = "spec.versions is empty"
        raise XrdError(msg)
    crd_names = {**copy.deepcopy(dict(names)), "categories": [*names.get("categories", []), "composite"]}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": str(cast("Mapping[str, Any]", xrd.get("metadata") or {}).get("name", ""))},
        "spec": {
            "group": spec["group"],
            "names": crd_names,
            "scope": "Namespaced" if scope == "Namespaced" else "Cluster",
            "versions": versions,
        },
    }


def _version(version: Any, index: int, scope: str, update_policy: str | None) -> Schema:
    version = _mapping(version)
    schema = _mapping(version.get("schema")).get("openAPIV3Schema")
    if not isinstance(schema, Mapping):
        msg = f"spec.versions[{index}].schema.openAPIV3Schema is missing: custom resource validation cannot be nil"
        raise XrdError(msg)
    problems = list(shape_problems(cast("Mapping[str, Any]", schema), f"spec.versions[{index}].schema.openAPIV3Schema"))
    if problems:
        raise XrdError("; ".join(problems[:3]) + (f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""))
    source = copy.deepcopy(dict(cast("Mapping[str, Any]", schema)))
    props = cast("Mapping[str, Any]", source.get("properties") or {})
    max_length = _MAX_NAME_LENGTH
    name_schema = cast(
        "Mapping[str, Any]", cast("Mapping[str, Any]", props.get("metadata") or {}).get("properties") or {}
    )
    own = cast("Mapping[str, Any]", name_schema.get("name") or {}).get("maxLength")
    if isinstance(own, int) and own < max_length:
        max_length = own
    root: Schema = {
        "type": "object",
        "required": ["spec"],
        "properties": {
            "apiVersion": _string(),
            "kind": _string(),
            "metadata": {"type": "object", "properties": {"name": {"type": "string", "maxLength": max_length}}},
            "spec": _part(props.get("spec"), spec=True),
            "status": _part(props.get("status"), spec=False),
        },
    }
    for key in ("description", "x-kubernetes-validations"):
        if source.get(key):
            root[key] = source[key]
    root["properties"]["spec"]["properties"].update(spec_props(scope, update_policy))
    root["properties"]["status"]["properties"].update(status_props(scope))
    subresources: Schema = {"status": {}}
    scale = cast("Mapping[str, Any]", version.get("subresources") or {}).get("scale")
    if scale is not None:
        subresources["scale"] = copy.deepcopy(scale)
    out: Schema = {
        "name": version.get("name"),
        "served": bool(version.get("served")),
        "storage": bool(version.get("referenceable")),
        "schema": {"openAPIV3Schema": root},
        "subresources": subresources,
    }
    if version.get("deprecated"):
        out["deprecated"] = True
        out["deprecationWarning"] = version.get("deprecationWarning")
    return out


def _mapping(value: Any) -> Mapping[str, Any]:
    return cast("Mapping[str, Any]", value) if isinstance(value, Mapping) else {}


_TYPES = ("object", "array", "string", "integer", "number", "boolean")
_SHAPES: dict[str, tuple[type, ...]] = {
    "type": (str,),
    "properties": (Mapping,),
    "items": (Mapping,),
    "additionalProperties": (bool, Mapping),
    "required": (list,),
    "enum": (list,),
    "pattern": (str,),
    "allOf": (list,),
    "anyOf": (list,),
    "oneOf": (list,),
    "not": (Mapping,),
    "x-kubernetes-validations": (list,),
}


def shape_problems(node: Mapping[str, Any], where: str) -> Iterator[str]:
    """Keywords of wrong type, which Crossplane cannot unmarshal into a JSONSchemaProps."""
    for key, kinds in _SHAPES.items():
        if key in node and not isinstance(node[key], kinds):
            yield f"{where}.{key}: cannot unmarshal {type(node[key]).__name__}"
    if isinstance(node.get("type"), str) and node["type"] not in _TYPES:
        yield f"{where}.type: {node['type']!r} is not one of {', '.join(_TYPES)}"
    rules = cast("list[Any]", node["x-kubernetes-validations"]) if _is_list(node, "x-kubernetes-validations") else []
    for index, rule in enumerate(rules):
        if not isinstance(rule, Mapping) or not isinstance(cast("Mapping[str, Any]", rule).get("rule"), str):
            yield f"{where}.x-kubernetes-validations[{index}]: a rule needs a CEL expression in `rule`"
    children: list[tuple[str, Any]] = [(f"properties.{k}", v) for k, v in _mapping(node.get("properties")).items()]
    children += [(k, node.get(k)) for k in ("items", "additionalProperties", "not") if isinstance(node.get(k), Mapping)]
    for junctor in ("allOf", "anyOf", "oneOf"):
        branches = cast("list[Any]", node[junctor]) if _is_list(node, junctor) else []
        children += [(f"{junctor}[{i}]", branch) for i, branch in enumerate(branches)]
    for name, child in children:
        if not isinstance(child, Mapping):
            yield f"{where}.{name}: cannot unmarshal {type(child).__name__} into a schema"
        else:
            yield from shape_problems(cast("Mapping[str, Any]", child), f"{where}.{name}")


def _is_list(node: Mapping[str, Any], key: str) -> bool:
    return isinstance(node.get(key), list)


def _part(node: Any, *, spec: bool) -> Schema:
    """spec or status of the XR's CRD: what genCrdVersion keeps of the XRD's."""
    source: Mapping[str, Any] = cast("Mapping[str, Any]", node) if isinstance(node, Mapping) else {}
    out: Schema = {"type": "object", "properties": dict(cast("Mapping[str, Any]", source.get("properties") or {}))}
    for key in ("required", "oneOf", "description", "x-kubernetes-validations"):
        if source.get(key):
            out[key] = source[key]
    if spec and "x-kubernetes-preserve-unknown-fields" in source:
        out["x-kubernetes-preserve-unknown-fields"] = source["x-kubernetes-preserve-unknown-fields"]
    return out
