"""What an InferenceCluster publishes as `status.gpuPools`: its pools, each with its devices.

A pool lists its devices, or names a Modelplane InferenceClass (`className`) whose `spec.devices`
it takes verbatim, as Modelplane's InferenceCluster composition does. The function reads the
classes the cluster names (`class_names`) and hands them in; only their `spec.devices` is read.
Beside the pools it relays what Modelplane's ModelCache composition reads (`relayed_status`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from pydantic import Field, field_validator

from modelplane import model as m
from modelplane.api._wire import Observed, dump, unique, validate
from modelplane.api.cluster import ClusterSpec, Device
from modelplane.errors import SpecError


class MissingInferenceClassError(SpecError):
    """A pool names an InferenceClass that does not exist (yet)."""

    reason = "InferenceClassNotFound"


class InferenceClassSpec(Observed):
    """The part of a Modelplane InferenceClass read here; provisioning and the rest are ignored."""

    devices: tuple[Device, ...] = Field(min_length=1, max_length=16)

    @field_validator("devices")
    @classmethod
    def _unique(cls, devices: tuple[Device, ...]) -> tuple[Device, ...]:
        unique("device names", [d.name for d in devices])
        return devices


def class_names(cluster_obj: Mapping[str, Any]) -> tuple[str, ...]:
    """The InferenceClasses spec.nodePools name, sorted and distinct; malformed entries are the parser's to report."""
    spec = cluster_obj.get("spec")
    if not isinstance(spec, Mapping):
        return ()
    pools = cast("Mapping[str, Any]", spec).get("nodePools")
    if not isinstance(pools, list):
        return ()
    found = {cast("Mapping[str, Any]", p).get("className") for p in cast("list[Any]", pools) if isinstance(p, Mapping)}
    return tuple(sorted(n for n in found if isinstance(n, str) and n))


def kserve_version(cluster_obj: Mapping[str, Any]) -> str | None:
    """The cluster's `spec.kserve.version` (None: absent); raises SpecError as `gpu_pools_status` does."""
    spec = validate(ClusterSpec, cluster_obj.get("spec") or {}, "spec")
    return spec.kserve.version if spec.kserve else None


def stack(cluster_obj: Mapping[str, Any]) -> m.Stack:
    """The cluster's `spec.stack` (Standard when absent); raises SpecError as `gpu_pools_status` does."""
    return m.Stack(validate(ClusterSpec, cluster_obj.get("spec") or {}, "spec").stack)


def _class_devices(name: str, obj: Mapping[str, Any] | None) -> tuple[Device, ...]:
    if obj is None:
        msg = f"InferenceClass {name} (named by spec.nodePools[].className) does not exist"
        raise MissingInferenceClassError(msg)
    try:
        return validate(InferenceClassSpec, obj.get("spec"), "spec").devices
    except SpecError as e:
        msg = f"InferenceClass {name}: {e}"
        raise SpecError(msg) from e


def gpu_pools_status(
    cluster_obj: Mapping[str, Any], classes: Mapping[str, Mapping[str, Any] | None] | None = None
) -> list[dict[str, Any]]:
    """`status.gpuPools` as the IC Composition publishes it: sorted by name, defaults filled.

    `classes`: the InferenceClass objects by name (None: not found) for every name `class_names`
    returns. Raises SpecError naming the bad field or the missing class.
    """
    spec = validate(ClusterSpec, cluster_obj.get("spec") or {}, "spec")
    out: list[dict[str, Any]] = []
    for pool in sorted(spec.node_pools or (), key=lambda p: p.name):
        devices = pool.devices
        if pool.class_name is not None:
            devices = _class_devices(pool.class_name, (classes or {}).get(pool.class_name))
        published: dict[str, Any] = {"name": pool.name, "nodes": pool.schedulable_nodes}
        if pool.packing != "Nodes":  # a Nodes pool is published exactly as Modelplane publishes it
            published["packing"] = pool.packing
        if devices is not None:
            published["devices"] = [dump(d) for d in sorted(devices, key=lambda d: d.name)]
        out.append(published)
    return out


def _at(obj: object, *path: str) -> object:
    for key in path:
        obj = cast("Mapping[str, Any]", obj).get(key) if isinstance(obj, Mapping) else None
    return obj


def relayed_status(cluster_obj: Mapping[str, Any]) -> dict[str, Any]:
    """What Modelplane's ModelCache composition reads of an InferenceCluster's status.

    It stages a cache only onto clusters that publish both (compose-model-cache `match_clusters`):
    `providerConfigRef.name`, the ClusterProviderConfig that reaches the cluster, and
    `cache.storageClassName`, the ReadWriteMany StorageClass for the cache's claim. Each is taken
    from the spec (`spec.providerConfigRef`, Modelplane's `spec.cluster.existing.cache`), else kept
    as Modelplane published it, so caches keep staging once the cluster is switched over.
    """
    out: dict[str, Any] = {}
    for field, spec_path in (
        ("providerConfigRef", ("spec", "providerConfigRef", "name")),
        ("cache", ("spec", "cluster", "existing", "cache", "storageClassName")),
    ):
        key = "name" if field == "providerConfigRef" else "storageClassName"
        value = _at(cluster_obj, *spec_path) or _at(cluster_obj, "status", field, key)
        if isinstance(value, str) and value:
            out[field] = {key: value}
    return out
