"""Given ModelReplicas offline: without a Ready condition they count as down, which a rollout exploits.

A render's own output carries no Ready condition (nothing runs offline), so feeding the last
render's ModelReplicas back previews a rollout that updates every replica in one round: none is
available, so the disruption budget has nothing to protect. The offline tools say so, and
`--assume-ready` gives each given ModelReplica without a Ready condition a True one, as a running
fleet would have, for the realistic preview.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from modelplane import names

from modelplane_function.cli.render.wire import Doc
from modelplane_function.handlers.convert import to_dict

ASSUMED = {
    "type": "Ready",
    "status": "True",
    "reason": "AssumedReady",
    "message": "treated as Ready offline (--assume-ready)",
    "lastTransitionTime": "2024-01-01T00:00:00Z",  # render's fixed timestamp
}


def is_replica(obj: Mapping[str, Any]) -> bool:
    return obj.get("kind") == names.KIND_REPLICA and obj.get("apiVersion") == names.API_VERSION


def has_ready(obj: Mapping[str, Any]) -> bool:
    status = obj.get("status")
    conditions = status.get("conditions") if isinstance(status, Mapping) else None
    return isinstance(conditions, list) and any(
        isinstance(c, Mapping) and c.get("type") == "Ready"  # pyright: ignore[reportUnknownMemberType]
        for c in conditions  # pyright: ignore[reportUnknownVariableType]
    )


def assumed(obj: Mapping[str, Any]) -> dict[str, Any]:
    """`obj`, with a True Ready condition when it is a ModelReplica without any Ready condition."""
    if not is_replica(obj) or has_ready(obj):
        return dict(obj)
    status = dict(obj.get("status") or {})
    status["conditions"] = [*(status.get("conditions") or []), ASSUMED]
    return {**obj, "status": status}


def assumed_doc(doc: Doc) -> Doc:
    """`assumed` for an encoded required resource; other kinds pass untouched, still encoded."""
    if not is_replica(doc.head):
        return doc
    obj = to_dict(doc.struct())
    return doc if has_ready(obj) else Doc.from_dict(assumed(obj))


def unready_note(replicas: Iterable[Mapping[str, Any]]) -> list[str]:
    """The note for given ModelReplicas without a Ready condition, or none."""
    count = sum(1 for r in replicas if is_replica(r) and not has_ready(r))
    if not count:
        return []
    some = "1 given ModelReplica has" if count == 1 else f"{count} given ModelReplicas have"
    they = "it counts" if count == 1 else "they count"
    return [
        f"{some} no Ready condition (a render's output has none), so {they} as down and a rollout may "
        "update every replica at once; --assume-ready treats given ModelReplicas as Ready"
    ]
