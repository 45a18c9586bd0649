"""Conditions, events and readiness: what the function says about an XR and its composed resources.

Results (events) are emitted on transitions only, as the function spec asks: a Warning is sent when
the condition it explains differs from the one the XR already shows.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane import names
from modelplane.api.replica import ready_at

_STATUS = {
    "True": fnv1.STATUS_CONDITION_TRUE,
    "False": fnv1.STATUS_CONDITION_FALSE,
    "Unknown": fnv1.STATUS_CONDITION_UNKNOWN,
}


@dataclass(frozen=True, slots=True, kw_only=True)
class Condition:
    type: str
    status: str  # "True" | "False" | "Unknown"
    reason: str
    message: str = ""


def observed_condition(obj: Mapping[str, Any] | None, typ: str) -> Condition | None:
    """The condition of type `typ` in an observed object's status, if any."""
    status = (obj or {}).get("status")
    conditions = status.get("conditions") if isinstance(status, Mapping) else None
    for c in conditions if isinstance(conditions, list) else []:
        if isinstance(c, Mapping) and c.get("type") == typ:
            return Condition(
                type=typ,
                status=str(c.get("status", "Unknown")),
                reason=str(c.get("reason", "")),
                message=str(c.get("message", "")),
            )
    return None


def is_ready(obj: Mapping[str, Any] | None) -> bool:
    """True when the object's Ready condition is True."""
    c = observed_condition(obj, "Ready")
    return c is not None and c.status == "True"


def serves_its_revision(replica: Mapping[str, Any] | None) -> bool:
    """Whether an observed ModelReplica is Ready for the revision its label names (api.replica.ready_at)."""
    if replica is None:
        return False
    meta = replica.get("metadata")
    labels = meta.get("labels") if isinstance(meta, Mapping) else None  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    revision = labels.get(names.LABEL_REVISION) if isinstance(labels, Mapping) else None  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    status = replica.get("status")
    rendered = status.get("renderedRevision") if isinstance(status, Mapping) else None  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    return ready_at(
        revision if isinstance(revision, str) and revision else None,
        ready=is_ready(replica),
        rendered=rendered if isinstance(rendered, str) else None,
    )


def set_condition(rsp: fnv1.RunFunctionResponse, c: Condition) -> None:
    out = fnv1.Condition(type=c.type, status=_STATUS[c.status], reason=c.reason)
    if c.message:
        out.message = c.message
    rsp.conditions.append(out)


def changed(observed: Mapping[str, Any], c: Condition) -> bool:
    """Whether the XR does not already show condition `c` (so an event is due)."""
    return observed_condition(observed, c.type) != c


def event(rsp: fnv1.RunFunctionResponse, *, warning: bool, reason: str, message: str) -> None:
    """A Normal or Warning result on the composite, with a PascalCase reason."""
    rsp.results.append(
        fnv1.Result(
            severity=fnv1.SEVERITY_WARNING if warning else fnv1.SEVERITY_NORMAL,
            reason=reason,
            message=message,
            target=fnv1.TARGET_COMPOSITE,
        )
    )


def report(rsp: fnv1.RunFunctionResponse, observed: Mapping[str, Any], c: Condition, *, warn: bool = False) -> None:
    """Set condition `c`; with `warn`, a False `c` the XR does not show yet also becomes a Warning event."""
    set_condition(rsp, c)
    if warn and c.status == "False" and changed(observed, c):
        event(rsp, warning=True, reason=c.reason, message=c.message)
