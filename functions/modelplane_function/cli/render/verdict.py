"""What a render's documents say went wrong, and the exit code that tells a script.

A failure is a condition by which the function says it could not do its job for an XR: a False
ReplicasScheduled (ModelDeployment), ReplicaRendered (ModelReplica) or GPUPoolsPublished
(InferenceCluster). Ready conditions are not failures: nothing is running offline. Replicas left
unplaced for want of capacity are a failure of their own kind, "partial", which a capacity preview
may accept (`--allow-partial`); so are replicas no cluster is suitable for (NoSuitableCluster).
Every other reason means the input was rejected. Unknown reasons
count as rejections, so a CI gate fails closed. An input object the function could not read and
left out (contained.py) is a rejected input too.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import IntEnum
from typing import Any, Protocol

from modelplane import names

# The condition by which each kind says whether the function did its job.
_OUTCOME_CONDITION = {
    names.KIND_DEPLOYMENT: names.CONDITION_REPLICAS_SCHEDULED,
    names.KIND_REPLICA: names.CONDITION_REPLICA_RENDERED,
    names.KIND_CLUSTER: names.CONDITION_POOLS_PUBLISHED,
}
# ReplicasScheduled reasons that mean "valid input, but not every replica has a place": no free
# nodes, no cluster suitable (taints, devices, selector) for the rest, room only past the fleet quota, or a
# replica that gave its GPUs to demand the fleet quotas rank ahead (reclaimed, preempted).
PARTIAL_REASONS = frozenset(
    {
        names.REASON_INSUFFICIENT_CAPACITY,
        names.REASON_NO_SUITABLE_CLUSTER,
        names.REASON_QUOTA_EXCEEDED,
        names.REASON_RECLAIMED,
        names.REASON_PREEMPTED,
    }
)


class Exit(IntEnum):
    OK = 0
    ERROR = 1  # nothing rendered: unreadable input, a fatal result, the function unreachable
    USAGE = 2  # click's code for a bad command line
    REJECTED = 3  # rendered, but the function rejected some input (a failure condition)
    PARTIAL = 4  # rendered, every input valid, some replicas unplaced
    NOT_SETTLED = 5  # `plan` only: rounds still changed something at --max-rounds


class Finding(Protocol):
    """Something stderr names and the exit code counts."""

    @property
    def partial(self) -> bool: ...

    def line(self) -> str: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class Failure:
    kind: str
    namespace: str
    name: str
    condition: str
    reason: str
    message: str
    cause: str = ""  # the main cause behind the message, when the CLI worked it out (cause.py)

    @property
    def partial(self) -> bool:
        return self.condition == names.CONDITION_REPLICAS_SCHEDULED and self.reason in PARTIAL_REASONS

    def line(self) -> str:
        where = f"{self.namespace}/{self.name}" if self.namespace else self.name
        line = f"{self.kind} {where}: {self.condition}=False {self.reason}: {self.message}"
        stop = "" if self.message.endswith(".") else "."
        return f"{line}{stop} Main cause: {self.cause}." if self.cause else line


def failures(docs: Iterable[Mapping[str, Any]]) -> list[Failure]:
    """Every failure condition on our XRs in the stream, in stream order, each XR once."""
    out: list[Failure] = []
    seen: set[tuple[str, str, str]] = set()
    for doc in docs:
        kind = str(doc.get("kind", ""))
        wanted = _OUTCOME_CONDITION.get(kind)
        if wanted is None or doc.get("apiVersion") != names.API_VERSION:
            continue
        meta = doc.get("metadata") or {}
        identity = (kind, str(meta.get("namespace") or ""), str(meta.get("name") or ""))
        if identity in seen:
            continue
        for c in (doc.get("status") or {}).get("conditions") or []:
            if c.get("type") == wanted and c.get("status") == "False":
                seen.add(identity)
                out.append(
                    Failure(
                        kind=kind,
                        namespace=identity[1],
                        name=identity[2],
                        condition=wanted,
                        reason=str(c.get("reason", "")),
                        message=str(c.get("message", "")),
                    )
                )
    return out


def exit_code(found: Iterable[Finding], *, allow_partial: bool) -> Exit:
    """REJECTED before PARTIAL: a rejected input matters more than a shortfall."""
    found = list(found)
    if any(not f.partial for f in found):
        return Exit.REJECTED
    if found and not allow_partial:
        return Exit.PARTIAL
    return Exit.OK
