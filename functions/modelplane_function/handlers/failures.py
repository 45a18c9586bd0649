"""What went wrong with what an XR composes, in words a condition message can carry.

A provider-kubernetes Object with `readiness.policy: DeriveFromObject` reports only
`Ready=False Unavailable` while the object it wraps is not ready (provider-kubernetes v1.2.1,
internal/controller/namespaced/object/object.go:553): the why (an LLMInferenceService's
`ConfigNotFound`, say) is in the wrapped object's own status, which the provider copies to
`status.atProvider.manifest`. So a composed Object fails when:

- its own `Synced` is False: the provider could not apply the manifest (the API server refused it);
- the wrapped object's `Ready` is False. Kubernetes-style conditions say Unknown while work is under
  way and False when it failed, so only False counts, and only `Ready`, whose polarity is known.

A ModelReplica fails, for its deployment, when its `ReplicaRendered` is False or its `ReplicaReady`
names a failing object.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from modelplane import names

from modelplane_function.handlers.conditions import Condition, observed_condition

MAX_MESSAGE = 240  # of each upstream message quoted: a condition must stay readable
MAX_NAMED = 3  # failures named in full in one message; the rest are counted


def _clip(text: str, limit: int | None) -> str:
    text = " ".join(text.split()).rstrip(".")  # it goes inside a sentence of ours
    return text if limit is None or len(text) <= limit else f"{text[: limit - 3]}..."


def _said(c: Condition, limit: int | None = MAX_MESSAGE) -> str:
    return f"{c.type}=False {c.reason or 'NoReason'}" + (f": {_clip(c.message, limit)}" if c.message else "")


def _wrapped(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    status = obj.get("status")  # observed state is whatever the API server holds: any shape
    at_provider = status.get("atProvider") if isinstance(status, Mapping) else None  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    manifest = at_provider.get("manifest") if isinstance(at_provider, Mapping) else None
    return manifest if isinstance(manifest, Mapping) else {}  # pyright: ignore[reportUnknownVariableType]


def object_failure(key: str, obj: Mapping[str, Any] | None) -> str | None:
    """What is failing about composed Object `key` (None when nothing is)."""
    if obj is None:
        return None
    synced = observed_condition(obj, "Synced")
    if synced is not None and synced.status == "False":
        return f"{key} is not applied ({_said(synced)})"
    wrapped = _wrapped(obj)
    ready = observed_condition(wrapped, "Ready")
    if ready is not None and ready.status == "False":
        meta = wrapped.get("metadata")
        name = meta.get("name") if isinstance(meta, Mapping) else None  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
        what = " ".join(str(p) for p in (wrapped.get("kind"), name) if p)
        return f"{key} ({what}) reports {_said(ready)}"
    return None


def replica_failure(obj: Mapping[str, Any] | None) -> str | None:
    """Why an observed ModelReplica does not serve, when it says it failed (None when it does not)."""
    rendered = observed_condition(obj, names.CONDITION_REPLICA_RENDERED)
    if rendered is not None and rendered.status == "False":
        return _said(rendered, None)  # our own message, bounded where it is made
    ready = observed_condition(obj, names.CONDITION_REPLICA_READY)
    if ready is not None and ready.status == "False" and ready.reason == names.REASON_OBJECT_FAILING:
        return _said(ready, None)
    return None


def listed(failures: Sequence[str]) -> str:
    """The first MAX_NAMED failures, then how many more."""
    more = len(failures) - MAX_NAMED
    return "; ".join(failures[:MAX_NAMED]) + (f"; and {more} more" if more > 0 else "")
