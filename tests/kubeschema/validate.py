"""Validate one object as the API server would on create, and the manifest a provider-kubernetes Object wraps.

Order, as in apiextensions-apiserver's customresource strategy: nulls pruned and defaults
applied, then the schema (jsonschema over the converted schema: types, enums, bounds, patterns,
required and unknown fields), ObjectMeta, the scale subresource's replica paths, list-type
uniqueness, embedded resources, and last the CEL rules, which the API server skips when an
earlier error is blocking (a wrong type, a missing required field, a value too long or not in
its enum). Then, for an object the schema accepts, the validating webhooks of `webhooks`, and
for an XRD the CRD Crossplane would render from it and every rule in it compiled, so an XRD
Crossplane could not serve fails here.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from tests.kubeschema import cel, metadata, openapi, structural, webhooks, xcrd
from tests.kubeschema.catalog import UPSTREAM, Catalog, KindSchema
from tests.kubeschema.paths import render
from tests.kubeschema.streams import documents

_OBJECT_GROUPS = frozenset({"kubernetes.crossplane.io", "kubernetes.m.crossplane.io"})
_MANIFEST = ("spec", "forProvider", "manifest")
_XRD = ("apiextensions.crossplane.io", "CompositeResourceDefinition")
_INT32_MAX = 2**31 - 1


@dataclass
class ObjectReport:
    """The verdict on one object."""

    label: str  # Kind/name [where]
    schema: str | None = None  # what validated it; None when no schema knows the kind
    errors: list[str] = field(default_factory=list[str])
    warnings: list[str] = field(default_factory=list[str])
    rules_passed: int = 0
    transition_rules: int = 0  # rules reading oldSelf, which the API server skips on create

    @property
    def ok(self) -> bool:
        return self.schema is not None and not self.errors


class Validator:
    """Validates objects against the vendored schemas and the XRDs it was given."""

    def __init__(self, *, xrds: Sequence[Path] = (), root: Path = UPSTREAM) -> None:
        self.catalog = Catalog(root)
        self.problems: list[str] = []  # XRDs that could not be registered
        for path, index, doc in xrd_documents(xrds):
            try:
                self.catalog.add_xrd(doc, f"{path}#{index}")
            except xcrd.XrdError as error:
                self.problems.append(f"{path}#{index}: {error}")

    def validate(self, obj: Any, where: str) -> list[ObjectReport]:
        """Reports for `obj` and, for a provider-kubernetes Object, for the manifest it wraps."""
        report = ObjectReport(label=f"{_kind(obj)}/{_name(obj)} [{where}]")
        reports = [report]
        if not isinstance(obj, Mapping):
            report.errors.append(f"(root): a {type(obj).__name__}, not an object")
            return reports
        obj = cast("Mapping[str, Any]", obj)
        api_version, kind = obj.get("apiVersion"), obj.get("kind")
        if not isinstance(api_version, str) or not isinstance(kind, str) or not api_version or not kind:
            report.errors.append("(root): apiVersion and kind must be non-empty strings")
            return reports
        found = self.catalog.lookup(api_version, kind)
        if isinstance(found, str):  # the kind is known, the version is not
            report.schema = f"{kind} without version {api_version!r}"
            report.errors.append(found)
            return reports
        if found is None:
            return reports
        self._check(obj, found, report)
        group = api_version.rpartition("/")[0]
        if group in _OBJECT_GROUPS and kind == "Object":
            manifest = _wrapped(obj)
            if manifest is not None:
                reports += self.validate(manifest, f"{where} > manifest")
        return reports

    def _check(self, obj: Mapping[str, Any], schema: KindSchema, report: ObjectReport) -> None:
        report.schema = schema.origin
        if not schema.served:
            report.errors.append(f"apiVersion {obj['apiVersion']!r} is not served")
        if schema.deprecation:
            report.warnings.append(f"apiVersion {obj['apiVersion']!r}: {schema.deprecation}")
        work = copy.deepcopy(dict(obj))
        structural.prune_nulls(work, schema.root, schema.resolver)
        if schema.structural:
            structural.apply_defaults(work, schema.root)
        errors = openapi.schema_errors(self.catalog.validator(schema), work)
        report.errors += [f"{render(e.path)}: {e.message}" for e in errors]
        meta_errors = metadata.object_errors(work.get("metadata"), cluster_scoped=schema.cluster_scoped)
        report.errors += [f"{render(p)}: {m}" for p, m in meta_errors]
        reported = {render(e.path) for e in errors}
        report.errors += [f"{p}: {m}" for p, m in _scale_errors(work, schema.scale) if p not in reported]
        blocking = any(e.blocking for e in errors)
        wrapped = schema.group in _OBJECT_GROUPS and schema.kind == "Object"
        skip = _MANIFEST if wrapped else None
        found = structural.check(schema.root, work, resolve=schema.resolver, rules=not blocking, skip_embedded=skip)
        report.errors += [f"{render(p)}: {m}" for p, m in found.errors]
        report.rules_passed, report.transition_rules = found.rules_passed, found.transition_rules
        if blocking and schema.structural:
            report.warnings.append("CEL rules not evaluated: the errors above stop the API server before them")
        hook = webhooks.WEBHOOKS.get((schema.group, schema.kind))
        if hook is not None and not report.errors:  # validating admission follows schema validation
            source, check = hook
            hook_errors, hook_warnings = check(work)
            report.errors += [f"{e} ({source})" for e in hook_errors]
            report.warnings += [f"{w} ({source})" for w in hook_warnings]
        if (schema.group, schema.kind) == _XRD and not report.errors:
            report.errors += _xrd_errors(work)


def _scale_errors(obj: Mapping[str, Any], scale: Mapping[str, Any] | None) -> list[tuple[str, str]]:
    """apiextensions-apiserver ValidateScaleSpec/Status: replica paths hold int32s when present."""
    errors: list[tuple[str, str]] = []
    for key in ("specReplicasPath", "statusReplicasPath"):
        path = str((scale or {}).get(key) or "")
        value: Any = obj
        for part in path.strip(".").split(".") if path else ():
            value = cast("Mapping[str, Any]", value).get(part) if isinstance(value, Mapping) else None
        if path and value is not None and (not isinstance(value, int) or not 0 <= value <= _INT32_MAX):
            errors.append((path.strip("."), f"{value!r} should be a non-negative int32 (scale subresource)"))
    return errors


def _xrd_errors(xrd: Mapping[str, Any]) -> list[str]:
    try:
        xcrd.render_crd(xrd)
    except xcrd.XrdError as error:
        return [f"Crossplane cannot render a CRD from it: {error}"]
    errors: list[str] = []
    # render_crd succeeded: every version is a mapping with a well-formed schema.
    versions = cast("list[Mapping[str, Any]]", cast("Mapping[str, Any]", xrd["spec"])["versions"])
    for index, version in enumerate(versions):
        schema = cast("Mapping[str, Any]", version["schema"]["openAPIV3Schema"])
        for path, rule in _rules(schema, ("spec", "versions", index, "schema", "openAPIV3Schema")):
            for key in ("rule", "messageExpression"):
                expression = rule.get(key)
                if isinstance(expression, str) and (problem := cel.compile_problem(expression)):
                    errors.append(f"{render(path)}.{key}: {problem}")
    return errors


def _rules(node: Mapping[str, Any], path: tuple[str | int, ...]) -> Iterator[tuple[Any, Mapping[str, Any]]]:
    for index, rule in enumerate(cast("list[Mapping[str, Any]]", node.get("x-kubernetes-validations") or [])):
        yield (*path, "x-kubernetes-validations", index), rule
    for name, sub in cast("Mapping[str, Any]", node.get("properties") or {}).items():
        yield from _rules(sub, (*path, "properties", name))
    for key in ("items", "additionalProperties"):
        if isinstance(node.get(key), Mapping):
            yield from _rules(cast("Mapping[str, Any]", node[key]), (*path, key))


def _wrapped(obj: Mapping[str, Any]) -> dict[str, Any] | None:
    """The manifest of a provider-kubernetes Object; an empty name becomes the Object's, as the provider does."""
    value: Any = obj
    for part in _MANIFEST:
        value = cast("Mapping[str, Any]", value).get(part) if isinstance(value, Mapping) else None
    if not isinstance(value, Mapping):
        return None
    manifest = copy.deepcopy(dict(cast("Mapping[str, Any]", value)))
    meta = manifest.setdefault("metadata", {})
    if isinstance(meta, dict) and not cast("dict[str, Any]", meta).get("name"):
        cast("dict[str, Any]", meta)["name"] = _name(obj)
    return manifest


def _kind(obj: Any) -> str:
    return str(cast("Mapping[str, Any]", obj).get("kind") or "?") if isinstance(obj, Mapping) else "?"


def _name(obj: Any) -> str:
    meta = cast("Mapping[str, Any]", obj).get("metadata") if isinstance(obj, Mapping) else None
    if isinstance(meta, Mapping):
        meta = cast("Mapping[str, Any]", meta)
        return str(meta.get("name") or (f"{meta['generateName']}*" if meta.get("generateName") else "?"))
    return "?"


def xrd_documents(paths: Sequence[Path]) -> Iterator[tuple[Path, int, Mapping[str, Any]]]:
    """Every CompositeResourceDefinition in the files, or YAML files under the directories, given."""
    files: list[Path] = []
    for path in paths:
        files += sorted(p for p in path.rglob("*.y*ml")) if path.is_dir() else [path]
    for file in files:
        for index, doc in documents(file.read_text()):
            if isinstance(doc, Mapping) and cast("Mapping[str, Any]", doc).get("kind") == _XRD[1]:
                yield file, index, cast("Mapping[str, Any]", doc)
