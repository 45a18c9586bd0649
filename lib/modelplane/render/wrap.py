"""The provider-kubernetes Object (kubernetes.m.crossplane.io/v1alpha1) around each manifest.

The Object lives on the control plane in the ModelReplica's namespace (Crossplane puts composed
resources of a namespaced XR there; we say so too) and reaches the workload cluster through the
replica's ClusterProviderConfig. The LLMInferenceService Objects derive their readiness from the
object's own conditions (its Ready); the rest are ready once created.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from modelplane.render.rendered import RenderedObject

OBJECT_API_VERSION = "kubernetes.m.crossplane.io/v1alpha1"


def wrap(
    manifest: Mapping[str, Any],
    *,
    key: str,
    name: str,
    namespace: str,
    labels: Mapping[str, str],
    provider_config: str,
    readiness_source: bool,
) -> RenderedObject:
    """Wrap one workload manifest as the composed resource `key`."""
    spec: dict[str, Any] = {
        "forProvider": {"manifest": dict(manifest)},
        "providerConfigRef": {"kind": "ClusterProviderConfig", "name": provider_config},
    }
    if readiness_source:
        spec["readiness"] = {"policy": "DeriveFromObject"}
    obj = {
        "apiVersion": OBJECT_API_VERSION,
        "kind": "Object",
        "metadata": {"name": name, "namespace": namespace, "labels": dict(labels)},
        "spec": spec,
    }
    return RenderedObject(key=key, manifest=obj, readiness_source=readiness_source)
