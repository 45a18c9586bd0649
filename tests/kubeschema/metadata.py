"""ObjectMeta syntax as the API server checks it (k8s.io/apimachinery pkg/api/validation/objectmeta.go
and pkg/util/validation): names, namespace, label keys and values, annotation keys and size.

Top-level objects need a DNS-1123 subdomain name (custom resources use NameIsDNSSubdomain in
apiextensions-apiserver pkg/registry/customresource/validator.go); embedded resources only a
valid path segment (pkg/apiserver/schema/objectmeta/validation.go).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, cast

from tests.kubeschema.paths import Path

_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
_TOTAL_ANNOTATIONS = 256 * 1024

Errors = list[tuple[Path, str]]


def object_errors(meta: Any, *, cluster_scoped: bool, path: Path = ("metadata",)) -> Errors:
    """Errors of a top-level object's metadata."""
    if not isinstance(meta, Mapping):
        return [(path, "required: an object needs metadata with a name")]
    meta = cast("Mapping[str, Any]", meta)
    errors: Errors = []
    name = meta.get("name")
    if not name and not meta.get("generateName"):
        errors.append(((*path, "name"), "required (or generateName)"))
    if isinstance(name, str) and name and (problem := _subdomain_problem(name)):
        errors.append(((*path, "name"), f"{name!r} {problem}"))
    namespace = meta.get("namespace")
    if namespace and cluster_scoped:
        errors.append(((*path, "namespace"), "set on a cluster-scoped kind: the API server drops it"))
    return errors + _common_errors(meta, path)


def embedded_errors(meta: Any, path: Path) -> Errors:
    """Errors of an embedded resource's metadata (a name, when set, is only a path segment)."""
    if not isinstance(meta, Mapping):
        return []
    meta = cast("Mapping[str, Any]", meta)
    errors: Errors = []
    name = meta.get("name")
    if isinstance(name, str) and name and (name in (".", "..") or "/" in name or "%" in name):
        errors.append(((*path, "name"), f"{name!r} may not be '.' or '..' nor contain '/' or '%'"))
    return errors + _common_errors(meta, path)


def _common_errors(meta: Mapping[str, Any], path: Path) -> Errors:
    errors: Errors = []
    namespace = meta.get("namespace")
    if isinstance(namespace, str) and namespace and not _is_dns_label(namespace):
        errors.append(((*path, "namespace"), f"{namespace!r} is not a DNS-1123 label"))
    labels = meta.get("labels")
    if isinstance(labels, Mapping):
        for key, value in cast("Mapping[str, Any]", labels).items():
            if problem := key_problem(key):
                errors.append(((*path, "labels"), f"key {key!r} {problem}"))
            if isinstance(value, str) and (len(value) > 63 or not _LABEL_VALUE.match(value)):
                errors.append(
                    (
                        (*path, "labels", key),
                        f"{value!r} is not a label value (at most 63 alphanumerics, '-', '_' or '.', "
                        "beginning and ending with an alphanumeric)",
                    )
                )
    annotations = meta.get("annotations")
    if isinstance(annotations, Mapping):
        annotations = cast("Mapping[str, Any]", annotations)
        for key in annotations:
            if problem := key_problem(key):
                errors.append(((*path, "annotations"), f"key {key!r} {problem}"))
        size = sum(len(k) + len(str(v)) for k, v in annotations.items())
        if size > _TOTAL_ANNOTATIONS:
            errors.append(((*path, "annotations"), f"total size {size} is over the limit of {_TOTAL_ANNOTATIONS}"))
    return errors


def key_problem(key: str) -> str | None:
    """Why `key` is not a qualified name (`[prefix/]name`), or None."""
    prefix, slash, name = key.rpartition("/")
    if slash and (problem := _subdomain_problem(prefix)):
        return f"has a prefix that {problem}"
    if len(name) > 63 or not _QUALIFIED_NAME.match(name):
        return (
            "is not a qualified name: [DNS subdomain prefix/]name, the name at most 63 alphanumerics, "
            "'-', '_' or '.', beginning and ending with an alphanumeric"
        )
    return None


def _subdomain_problem(name: str) -> str | None:
    if len(name) > 253 or not _DNS_SUBDOMAIN.match(name):
        return "is not a DNS-1123 subdomain (lower-case alphanumerics, '-' and '.', at most 253 characters)"
    return None


def _is_dns_label(name: str) -> bool:
    return len(name) <= 63 and _DNS_LABEL.match(name) is not None
