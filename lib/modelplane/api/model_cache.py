"""Modelplane's ModelCache (modelplane.ai/v1alpha1), read for placement: where its model is staged.

The kind and its composition are Modelplane's (they stage the weights onto a ReadWriteMany
PersistentVolumeClaim on each matched InferenceCluster with a hydration Job); this function only
reads a cache a deployment names. Its footprint is `spec.clusterSelector.matchLabels` (absent: every
cluster) and `status.clusters[].phase` per cluster; the source fields are the cache's business and
are not checked here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from pydantic import Field

from modelplane import model as m
from modelplane.api._wire import Observed, validate
from modelplane.errors import SpecError
from modelplane.names import KIND_MODEL_CACHE


class CacheSelector(Observed):
    match_labels: dict[str, str] | None = None


class CacheSpec(Observed):
    cluster_selector: CacheSelector | None = None


class CacheCluster(Observed):
    name: str = Field(min_length=1)
    phase: str | None = None


class CacheStatus(Observed):
    clusters: tuple[CacheCluster, ...] | None = None


def parse_model_cache(obj: Mapping[str, Any]) -> m.ModelCache:
    """A ModelCache object as a `model.ModelCache`; raises SpecError naming the bad field."""
    meta = obj.get("metadata")
    name = meta.get("name") if isinstance(meta, Mapping) else None  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    namespace = meta.get("namespace") if isinstance(meta, Mapping) else None  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    if not isinstance(name, str) or not name:
        msg = "metadata.name is missing"
        raise SpecError(msg)
    spec = validate(CacheSpec, obj.get("spec") or {}, "spec")
    status = validate(CacheStatus, obj.get("status") or {}, "status")
    labels = spec.cluster_selector.match_labels if spec.cluster_selector else None
    phases: dict[str, str] = {}
    for cluster in status.clusters or ():
        phases.setdefault(cluster.name, cluster.phase or "")  # the first entry of a name counts
    return m.ModelCache(
        namespace=namespace if isinstance(namespace, str) else "",
        name=name,
        cluster_selector=m.LabelSelector(match_labels=dict(labels)) if labels else None,
        phases=dict(sorted(phases.items())),
    )


def with_model_cache(deployment: m.Deployment, objects: Iterable[Mapping[str, Any]]) -> m.Deployment:
    """The deployment with the ModelCache it names, read from `objects`, or with why it cannot be.

    Only the named cache of the deployment's namespace counts; one missing or unreadable is a
    problem that stops new placements only (scheduler/filters.py): running replicas stay.
    """
    name = deployment.model_cache
    if name is None:
        return deployment
    where = f"{deployment.namespace}/{name}"
    for obj in objects:
        meta = obj.get("metadata")
        if not isinstance(meta, Mapping):
            continue
        named: Mapping[str, Any] = meta  # pyright: ignore[reportUnknownVariableType]
        if obj.get("kind") != KIND_MODEL_CACHE or (named.get("namespace"), named.get("name")) != (
            deployment.namespace,
            name,
        ):
            continue
        try:
            return replace(deployment, cache=parse_model_cache(obj))
        except SpecError as e:
            return replace(deployment, cache_problem=f"{KIND_MODEL_CACHE} {where} cannot be read: {e}")
    return replace(deployment, cache_problem=f"{KIND_MODEL_CACHE} {where} does not exist")
