"""What a ModelDeployment showed of its rollout after the previous reconcile, read from the observed XR."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from modelplane import names
from modelplane.rollout import Observed


def _time(value: object) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        t = datetime.fromisoformat(value)
    except ValueError:
        return None
    return t if t.tzinfo is not None else t.replace(tzinfo=UTC)


def _count(value: object) -> int | None:
    # Struct numbers are floats
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def observed_rollout(xr: Mapping[str, Any]) -> Observed:
    status: Any = xr.get("status")
    status = status if isinstance(status, Mapping) else {}
    replicas: Any = status.get("replicas")  # pyright: ignore[reportUnknownMemberType]
    replicas = replicas if isinstance(replicas, Mapping) else {}
    conditions: Any = status.get("conditions")  # pyright: ignore[reportUnknownMemberType]
    found: Mapping[str, Any] = {}
    for c in conditions if isinstance(conditions, list) else []:  # pyright: ignore[reportUnknownVariableType]
        if isinstance(c, Mapping) and c.get("type") == names.CONDITION_PROGRESSING:  # pyright: ignore[reportUnknownMemberType]
            found = c  # pyright: ignore[reportUnknownVariableType]
    revision: Any = status.get("revision")  # pyright: ignore[reportUnknownMemberType]
    return Observed(
        reason=str(found["reason"]) if "reason" in found else None,
        message=str(found["message"]) if "message" in found else None,
        since=_time(found.get("lastTransitionTime")),
        revision=revision if isinstance(revision, str) else None,
        updated=_count(replicas.get("updated")),  # pyright: ignore[reportUnknownMemberType]
        available=_count(replicas.get("available")),  # pyright: ignore[reportUnknownMemberType]
    )
