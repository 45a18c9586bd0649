"""What the API server stamps on every object it stores, read at the edge for the scheduler."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from modelplane.model import ModelReplica


def creation_time(value: object) -> str | None:
    """metadata.creationTimestamp as a sortable UTC string; None when absent or not a timestamp."""
    if not isinstance(value, str) or not value:
        return None
    try:
        t = datetime.fromisoformat(value)
    except ValueError:
        return None
    if t.tzinfo is None:
        t = t.replace(tzinfo=UTC)
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def stamped(replica: ModelReplica, meta: Mapping[str, Any]) -> ModelReplica:
    """The replica with its creation time and whether it is being deleted, from its metadata."""
    created = creation_time(meta.get("creationTimestamp"))
    deleting = bool(meta.get("deletionTimestamp"))
    if (created, deleting) == (replica.created, replica.deleting):
        return replica
    return replace(replica, created=created, deleting=deleting)
