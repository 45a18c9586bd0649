"""Modelplane fields accepted for compatibility that have no effect here, named for the XR's condition.

Modelplane's manifests apply unchanged, but some of their fields belong to what Modelplane does
besides scheduling: provisioning clusters and node pools. The parsers accept
them (closed shapes, so a typo stays an error); this module lists the ones an object sets, with
why they do nothing, so the function can say so on the object instead of ignoring them silently.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

from modelplane.names import KIND_CLUSTER

CLUSTER_PROVISIONING = "cluster provisioning; clusters are reached through spec.providerConfigRef"
POOL_PROVISIONING = "node pool provisioning"
POOL_FIELDS = ("minNodeCount", "zones", "fabric", "capacityBlock")
MAX_LISTED = 12  # fields named in a message; the rest are counted


@dataclass(frozen=True, slots=True)
class IgnoredField:
    path: str
    why: str


def _mapping(value: object) -> Mapping[str, Any]:
    return cast("Mapping[str, Any]", value) if isinstance(value, Mapping) else {}


def _cluster(spec: Mapping[str, Any]) -> list[IgnoredField]:
    out = [IgnoredField("spec.cluster", CLUSTER_PROVISIONING)] if "cluster" in spec else []
    pools = spec.get("nodePools")
    for pool in cast("list[Any]", pools) if isinstance(pools, list) else []:
        p = _mapping(pool)
        where = f"spec.nodePools[{p.get('name')}]"
        out.extend(IgnoredField(f"{where}.{f}", POOL_PROVISIONING) for f in POOL_FIELDS if f in p)
    return out


def ignored_fields(obj: Mapping[str, Any]) -> tuple[IgnoredField, ...]:
    """The Modelplane-only fields `obj` (an XR of ours, as a dict) sets, in spec order."""
    spec = _mapping(obj.get("spec"))
    kind = obj.get("kind")
    if kind == KIND_CLUSTER:
        return tuple(_cluster(spec))
    return ()


def ignored_message(fields: tuple[IgnoredField, ...]) -> str:
    """`Accepted for Modelplane compatibility, no effect here: <paths> (<why>); ...`, fields in order."""
    by_why: dict[str, list[str]] = {}
    for f in fields:
        by_why.setdefault(f.why, []).append(f.path)
    parts: list[str] = []
    for why, paths in by_why.items():
        shown = ", ".join(paths[:MAX_LISTED])
        more = f" and {len(paths) - MAX_LISTED} more" if len(paths) > MAX_LISTED else ""
        parts.append(f"{shown}{more} ({why})")
    return f"Accepted for Modelplane compatibility, no effect here: {'; '.join(parts)}."
