"""Answering required-resource selectors the way engine render's in-memory API server does.

The store holds the XR, its observed composed resources and every required resource, keyed by
(apiVersion, kind, namespace, name); a later entry with the same key wins. A name selector is a Get
(namespace included, "" for cluster-scoped kinds); otherwise it is a List filtered by group and
kind (and version), by namespace when the selector has one, and by labels, sorted by namespace/name.
Objects are kept encoded (wire.Doc): answering reads only their apiVersion, kind and metadata.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from modelplane_function.cli.render.unused import Usage
from modelplane_function.cli.render.wire import Doc

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
    def __init__(self, objects: Iterable[Mapping[str, Any] | Doc], usage: Usage | None = None) -> None:
        self._usage = usage  # records what was asked for and handed over (unused.py names the rest)
        self._objects: dict[_Key, Doc] = {}
        for obj in objects:
            doc = obj if isinstance(obj, Doc) else Doc.from_dict(obj)
            self._objects[_key(doc.head)] = doc

    def fetch(self, selector: fnv1.ResourceSelector) -> list[Doc]:
        found = self._fetch(selector)
        if self._usage is not None:
            self._usage.record(selector.api_version, selector.kind, found)
        return found

    def _fetch(self, selector: fnv1.ResourceSelector) -> list[Doc]:
        namespace = selector.namespace if selector.HasField("namespace") else ""
        match = selector.WhichOneof("match")
        if match == "match_name":
            found = self._objects.get((selector.api_version, selector.kind, namespace, selector.match_name))
            return [] if found is None else [found]
        labels = dict(selector.match_labels.labels) if match == "match_labels" else {}
        group, version = _split(selector.api_version)
        out: list[tuple[str, Doc]] = []
        for (api_version, kind, ns, name), doc in self._objects.items():
            obj_group, obj_version = _split(api_version)
            if kind != selector.kind or obj_group != group:
                continue
            if version and obj_version and version != obj_version:
                continue
            if namespace and ns != namespace:
                continue
            have = (doc.head.get("metadata") or {}).get("labels") or {}
            if any(have.get(k) != v for k, v in labels.items()):
                continue
            out.append((f"{ns}/{name}", doc))
        return [doc for _, doc in sorted(out, key=lambda kv: kv[0])]
