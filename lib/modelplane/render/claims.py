"""DRA ResourceClaimTemplate (resource.k8s.io/v1) of a claiming member.

A template rather than a ResourceClaim: every pod of the Deployment / LeaderWorkerSet gets its own
claim (a ResourceClaim named by several pods is one shared allocation). One `exactly` request per
resolved device request; the member's constraints follow, narrowed to the requests that resolved
to DRA devices (a Synthetic device is never claimed, and DRA rejects a constraint naming a request
the claim lacks). A constraint left with none of its named requests is dropped; one that named
none applies to every request and is kept as is.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from modelplane.model import PlacedMember


def _request(name: str, device_class_name: str, count: int, selectors: tuple[str, ...]) -> dict[str, Any]:
    exactly: dict[str, Any] = {"deviceClassName": device_class_name, "count": count}
    if selectors:
        exactly["selectors"] = [{"cel": {"expression": s}} for s in selectors]
    return {"name": name, "exactly": exactly}


def _constraints(member: PlacedMember) -> list[dict[str, Any]]:
    claimed = {r.name for r in member.device_requests}
    out: list[dict[str, Any]] = []
    for c in member.constraints:
        requests = [r for r in c.requests if r in claimed]
        if c.requests and not requests:
            continue
        entry: dict[str, Any] = {"matchAttribute": c.match_attribute}
        if requests:
            entry["requests"] = sorted(requests)
        out.append(entry)
    return sorted(out, key=lambda e: (e["matchAttribute"], e.get("requests", [])))


def resource_claim_template(
    member: PlacedMember, *, name: str, namespace: str, labels: Mapping[str, str]
) -> dict[str, Any]:
    """The member's claim template; callers render one only for members with device requests."""
    requests = sorted(member.device_requests, key=lambda r: r.name)
    devices: dict[str, Any] = {
        "requests": [_request(r.name, r.device_class_name, r.count, r.selectors) for r in requests]
    }
    constraints = _constraints(member)
    if constraints:
        devices["constraints"] = constraints
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": name, "namespace": namespace, "labels": dict(labels)},
        "spec": {"spec": {"devices": devices}},
    }
