"""Answering required-resource selectors the way engine render's in-memory API server does.

The store holds the XR, its observed composed resources and every required resource, keyed by
(apiVersion, kind, namespace, name); a later entry with the same key wins. A name selector is a Get
(namespace included, "" for cluster-scoped kinds); otherwise it is a List filtered by group and
kind (and version), by namespace when the selector has one, and by labels, sorted by namespace/name.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from crossplane.function.proto.v1 import run_function_pb2 as fnv1

_Key = tuple[str, str, str, str]


def _split(api_version: str) -> tuple[str, str]:
    group, _, version = api_version.rpartition("/")
    return group, version


def _key(obj: Mapping[str, Any]) -> _Key:
    meta = obj.get("metadata") or {}
    return (
        str(obj.get("apiVersion", "")),
        str(obj.get("kind", "")),
        str(meta.get("namespace") or ""),
        str(meta.get("name") or ""),
    )


class Store:
    def __init__(self, objects: Iterable[Mapping[str, Any]]) -> None:
        self._objects: dict[_Key, Mapping[str, Any]] = {}
        for obj in objects:
            self._objects[_key(obj)] = obj

    def fetch(self, selector: fnv1.ResourceSelector) -> list[Mapping[str, Any]]:
        namespace = selector.namespace if selector.HasField("namespace") else ""
        match = selector.WhichOneof("match")
        if match == "match_name":
            found = self._objects.get((selector.api_version, selector.kind, namespace, selector.match_name))
            return [] if found is None else [found]
        labels = dict(selector.match_labels.labels) if match == "match_labels" else {}
        group, version = _split(selector.api_version)
        out: list[tuple[str, Mapping[str, Any]]] = []
        for (api_version, kind, ns, name), obj in self._objects.items():
            obj_group, obj_version = _split(api_version)
            if kind != selector.kind or obj_group != group:
                continue
            if version and obj_version and version != obj_version:
                continue
            if namespace and ns != namespace:
                continue
            have = (obj.get("metadata") or {}).get("labels") or {}
            if any(have.get(k) != v for k, v in labels.items()):
                continue
            out.append((f"{ns}/{name}", obj))
        return [obj for _, obj in sorted(out, key=lambda kv: kv[0])]
